import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';
import { loadSqlite, sqliteOpenError } from '../../connection/drivers.js';
import { type SqliteThread, sqliteThread } from './sqlite-thread.js';

/** The WAL file's size kept after a checkpoint reset (`journal_size_limit`). */
const JOURNAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;

/** Prepared statements kept per connection; the store issues a few dozen distinct shapes. */
const STATEMENT_CACHE_SIZE = 256;

/** A SQLite file the store opened itself: the connection, with its prepared statements cached. */
export interface SqliteFile {
  /** The better-sqlite3 connection. */
  readonly database: Database.Database;
  /** The prepared statement for `sql`, from the cache when it was prepared before. */
  prepare(sql: string): Database.Statement;
  /** The same connection as Kysely's SQLite dialect wants it (sharing the statement cache). */
  readonly kysely: SqliteDatabase;
  /**
   * The background thread of this file (see `sqliteThread`), to run large write transactions on;
   * undefined for `:memory:` (whose data no other connection sees) and once the thread has failed.
   */
  writer(): SqliteThread | undefined;
  /**
   * Checkpoint the whole WAL into the database and truncate the WAL file to zero bytes, now, if no other
   * connection is reading or writing (it never waits: the busy timeout is 0 for this call); nothing
   * inside a transaction of this connection. Frees the WAL's disk space when the disk runs low.
   */
  truncateWal(): void;
  /** Stops background work (the file's background thread); call before closing the connection. */
  stopBackgroundWork(): Promise<void>;
}

/**
 * Open a SQLite file (or `:memory:`) for the store: WAL journal, a busy timeout so that several
 * processes can share the file, `synchronous=NORMAL` (durable across process crashes; WAL makes it
 * safe against corruption), foreign keys on, a page cache of `cacheMiB`, WAL checkpoints on a background
 * thread once the WAL grows (see `sqliteThread`). Statements are prepared once and reused:
 * Kysely's SQLite driver prepares on every query, which would dominate the cost of small hot statements.
 */
export function openSqliteFile(path: string, busyTimeoutMs: number, cacheMiB = 64): SqliteFile {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const Sqlite = loadSqlite();
  let db: Database.Database;
  try {
    db = new Sqlite(path, { timeout: busyTimeoutMs });
  } catch (error) {
    throw sqliteOpenError(error);
  }
  // The busy timeout must be in place before switching to WAL: another process may hold the lock.
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  // 8 KiB pages (a new file only; an existing one keeps its own): a bulk write dirties and logs half as
  // many pages. On a million-row CSV import 8 KiB beat 4 KiB and matched 16 KiB; but 16 KiB made each
  // small commit log more, and `mailroom serve` answered fewer batches with a higher p99 for single
  // requests (BENCHMARKS.md, "CSV sources").
  db.pragma('page_size = 8192');
  if (path !== ':memory:') db.pragma('journal_mode = WAL');
  // Bulk inserts and claims touch many pages; a larger cache and fewer, larger checkpoints (each one
  // syncs the database file) measured well above the insert throughput of the defaults.
  const cacheKiB =
    Number.isFinite(cacheMiB) && cacheMiB > 0 ? Math.max(64, Math.round(cacheMiB * 1024)) : 65536;
  // Settings of every connection to the file: this one's and the background thread's.
  const pragmas = [
    'synchronous = NORMAL',
    'foreign_keys = ON',
    `cache_size = -${cacheKiB}`,
    'temp_store = MEMORY',
  ];
  for (const pragma of pragmas) db.pragma(pragma);
  // After a checkpoint resets the WAL, its file is cut back to this size: the WAL's disk space stays
  // bounded by it (and, between checkpoints, by what is written meanwhile), never by its largest burst.
  db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
  const thread: SqliteThread | undefined =
    path === ':memory:' ? undefined : sqliteThread(db, { file: path, busyTimeoutMs, pragmas });
  const cache = new Map<string, Database.Statement>();
  const prepare = (sql: string): Database.Statement => {
    const hit = cache.get(sql);
    if (hit) return hit;
    const statement = db.prepare(sql);
    if (cache.size >= STATEMENT_CACHE_SIZE) {
      const oldest = cache.keys().next();
      if (!oldest.done) cache.delete(oldest.value);
    }
    cache.set(sql, statement);
    return statement;
  };
  return {
    database: db,
    prepare,
    kysely: {
      prepare: prepare as SqliteDatabase['prepare'],
      close(): void {
        thread?.stopNow();
        cache.clear();
        db.close();
      },
    },
    writer: () => (thread?.usable && db.open ? thread : undefined),
    truncateWal() {
      if (path === ':memory:' || !db.open || db.inTransaction) return;
      db.pragma('busy_timeout = 0');
      try {
        db.pragma('wal_checkpoint(TRUNCATE)');
      } finally {
        db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
      }
    },
    stopBackgroundWork: async () => thread?.stop(),
  };
}

/**
 * The file path of a SQLite URL, or undefined when `url` names another database.
 * Accepts `sqlite:path`, `sqlite://path`, `file:path`, `:memory:` and a plain path.
 */
export function sqlitePathOf(url: string): string | undefined {
  if (url === ':memory:') return url;
  for (const prefix of ['sqlite://', 'sqlite:', 'file://', 'file:']) {
    if (url.startsWith(prefix)) return url.slice(prefix.length) || ':memory:';
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return undefined;
  return url;
}
