import { resolve } from 'node:path';
import { MailroomError } from '@mailroom/core';
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from 'kysely';
import type pg from 'pg';
import type { SqliteFile } from '../dialects/sqlite/sqlite-database.js';
import { openSqliteFile, sqlitePathOf } from '../dialects/sqlite/sqlite-database.js';
import { loadMysql, loadPg, loadSqlite } from './drivers.js';
import type { SqlKind, SqlStoreOptions } from './options.js';

/** A database handle the store runs raw SQL through; the table types are the store's own business. */
export type Db = Kysely<unknown>;

/** What {@link connect} resolves the options to. */
export interface Connection {
  db: Db;
  kind: SqlKind;
  /** Releases what `connect` opened (nothing for a Kysely instance the caller owns). */
  release(): Promise<void>;
  /**
   * A SQLite file the store opened itself (from a URL): its connection once Kysely has opened it, for
   * statements run directly on it while Kysely's connection is held. Absent for a Kysely instance or
   * dialect of the caller's, whose driver the store only reaches through Kysely.
   */
  sqliteFile?: () => SqliteFile | undefined;
  /**
   * A PostgreSQL pool the store opened itself (from a URL): mark a statement text (with `$n`
   * placeholders) to be prepared once per connection and then executed by name, which spares
   * PostgreSQL parsing and planning it on every execution. Absent for a pool of the caller's.
   */
  pgPrepare?: (text: string) => void;
  /** The path of a SQLite file the store opened itself (not `:memory:`): for its free-space reserve. */
  sqlitePath?: string;
  /** A PostgreSQL pool the store opened itself, for the few statements Kysely cannot run (scripts). */
  pgPool?: pg.Pool;
}

/** Statement texts prepared by name on the pool's connections, at most this many per pool. */
const MAX_PREPARED = 256;

/**
 * A pg client class that executes the texts in `names` as named prepared statements (pg parses a name
 * once per connection and reuses it); every other query goes through unchanged.
 */
function preparingClient(names: Map<string, string>): typeof pg.Client {
  return class PreparingClient extends loadPg().Client {
    // biome-ignore lint/suspicious/noExplicitAny: pg's Client constructor takes a config of many shapes.
    constructor(config?: any) {
      super(config);
      // A connection reset while the client is checked out but between queries (a database going away)
      // is emitted as 'error' on the client, where the pool listens only while it is idle: unhandled, it
      // would end the process. Nothing is lost by ignoring it here: the client is no longer queryable,
      // its next query fails (STORE_UNAVAILABLE) and the pool discards it on release.
      this.on('error', () => undefined);
    }

    // biome-ignore lint/suspicious/noExplicitAny: pg's query has a dozen overloads; this forwards them all.
    override query(config: any, values?: any, callback?: any): any {
      if (typeof config === 'string' && Array.isArray(values)) {
        const name = names.get(config);
        if (name !== undefined) return super.query({ name, text: config, values }, callback);
      }
      return super.query(config, values, callback);
    }
  };
}

/**
 * The URL without the store's own `pgbouncer` parameter, and whether it asked for transaction pooling
 * (`pgbouncer=true`, as other PostgreSQL clients spell it). pg would pass an unknown parameter on to the
 * server as a setting, which PgBouncer refuses.
 */
function poolerOf(url: string): { url: string; transactionPooling: boolean } {
  const at = url.indexOf('?');
  if (at < 0) return { url, transactionPooling: false };
  const params = new URLSearchParams(url.slice(at + 1));
  const flag = params.get('pgbouncer');
  if (flag === null) return { url, transactionPooling: false };
  params.delete('pgbouncer');
  const rest = params.toString();
  return {
    url: url.slice(0, at) + (rest ? `?${rest}` : ''),
    transactionPooling: flag === 'true' || flag === '1',
  };
}

/**
 * SQLite files open in this process, shared by every store on the same file. better-sqlite3 is
 * synchronous: a second connection of the same process waiting on the first one's write lock would
 * block the thread the first one needs to finish, until the busy timeout. One connection per file,
 * behind Kysely's mutex, serializes them instead. Other processes have their own connections.
 */
const openSqliteFiles = new Map<string, { db: Db; file?: SqliteFile; users: number }>();

/** Resolve store options to a Kysely instance and the database kind. Opens nothing before first use. */
export function connect(options: SqlStoreOptions): Connection {
  if ('url' in options) {
    return connectUrl(
      options.url,
      options.transactionPooling ?? false,
      options.poolSize ?? 10,
      options.busyTimeoutMs ?? 5000,
      options.sqliteCacheMiB ?? 64,
    );
  }
  if ('db' in options) return { db: options.db as Db, kind: options.dialect, release: async () => undefined };
  return owned(new Kysely<unknown>({ dialect: options.dialect }), options.kind);
}

function owned(db: Db, kind: SqlKind): Connection {
  return { db, kind, release: () => db.destroy() };
}

function connectUrl(
  url: string,
  transactionPooling: boolean,
  poolSize: number,
  busyTimeoutMs: number,
  cacheMiB: number,
): Connection {
  if (/^postgres(ql)?:\/\//i.test(url)) {
    const pooler = poolerOf(url);
    const names = new Map<string, string>();
    const prepareByName = !(transactionPooling || pooler.transactionPooling);
    const pool = new (loadPg().Pool)({
      connectionString: pooler.url,
      max: poolSize,
      Client: preparingClient(names),
    });
    // An idle connection dropped by the server is reported here; unhandled, it would end the process.
    // The pool replaces it, and a query on a broken connection fails as STORE_FAILED.
    pool.on('error', () => undefined);
    return {
      ...owned(new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) }), 'postgres'),
      pgPool: pool,
      ...(prepareByName && {
        pgPrepare(text: string) {
          if (!names.has(text) && names.size < MAX_PREPARED) names.set(text, `mailroom_${names.size + 1}`);
        },
      }),
    };
  }
  if (/^(mysql|mariadb):\/\//i.test(url)) {
    const pool = loadMysql().createPool({
      uri: url.replace(/^mariadb:/i, 'mysql:'),
      connectionLimit: poolSize,
      charset: 'utf8mb4',
    });
    return owned(new Kysely<unknown>({ dialect: new MysqlDialect({ pool }) }), 'mysql');
  }
  const path = sqlitePathOf(url);
  if (path === undefined) {
    throw new MailroomError(
      'INTERNAL',
      `unsupported database URL scheme: ${url.replace(/\/\/[^@/]*@/, '//***@')}`,
      {
        source: 'sql',
      },
    );
  }
  // The file opens on first use; a missing driver is said now, where the store is created.
  loadSqlite();
  const open = () => {
    const entry: { db: Db; file?: SqliteFile; users: number } = {
      db: new Kysely<unknown>({
        dialect: new SqliteDialect({
          database: async () => {
            entry.file = openSqliteFile(path, busyTimeoutMs, cacheMiB);
            return entry.file.kysely;
          },
        }),
      }),
      users: 0,
    };
    return entry;
  };
  if (path === ':memory:') {
    const entry = open();
    return { ...owned(entry.db, 'sqlite'), sqliteFile: () => entry.file };
  }
  const key = resolve(path);
  const shared = openSqliteFiles.get(key) ?? open();
  shared.users++;
  openSqliteFiles.set(key, shared);
  let released = false;
  return {
    db: shared.db,
    kind: 'sqlite',
    sqlitePath: key,
    sqliteFile: () => shared.file,
    async release() {
      if (released) return;
      released = true;
      if (--shared.users > 0) return;
      openSqliteFiles.delete(key);
      // The checkpoint thread's connection closes first, so that closing this last one checkpoints
      // and removes the WAL as usual.
      await shared.file?.stopBackgroundWork();
      await shared.db.destroy();
    },
  };
}
