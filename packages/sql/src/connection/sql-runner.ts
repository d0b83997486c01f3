import { MailroomError } from '@mailroom/core';
import type Database from 'better-sqlite3';
import { CompiledQuery } from 'kysely';
import type pg from 'pg';
import type { SqliteFile } from '../dialects/sqlite/sqlite-database.js';
import type { Db } from './connect.js';
import { isTransient } from './sql-errors.js';

/** Rows per multi-row statement: large enough to amortize a round trip, small enough to plan quickly. */
const MAX_ROWS_PER_STATEMENT = 500;
/** Bytes of values per multi-row statement, to stay well under MySQL's default 16 MB packet. */
const MAX_BYTES_PER_STATEMENT = 4 * 1024 * 1024;
/** Attempts of an operation that failed for contention alone (deadlock, busy) before giving up. */
const ATTEMPTS = 5;

/** What one statement returned. */
export interface RunResult<R> {
  rows: R[];
  /** Rows inserted, updated or deleted (for MySQL updates: rows matched). */
  affected: number;
}

/**
 * What the runner asks of its database's dialect (`dialects/sql-dialect.ts` extends it): how statements
 * are bound and limited, and how a transaction is opened.
 */
export interface RunnerDialect {
  /** The most bound parameters one statement may carry. */
  readonly maxParameters: number;
  /** The driver wants numbered placeholders (`$1, $2, ...`) where the store writes `?`. */
  readonly numberedPlaceholders: boolean;
  /**
   * Transactions lock rows (PostgreSQL, MySQL): locking reads take ` FOR UPDATE`, and rows are written in
   * key order so that concurrent transactions do not deadlock. False where a transaction locks the whole
   * database (SQLite).
   */
  readonly rowLocks: boolean;
  /**
   * Run `fn` in one transaction on `db` and commit it (roll back if it throws), in the dialect's way.
   * `run` executes a statement on a held connection (for dialects that begin and commit by hand).
   */
  transaction<T>(
    db: Db,
    fn: (tx: Db) => Promise<T>,
    run: (conn: Db, text: string) => Promise<unknown>,
  ): Promise<T>;
}

/** Executes the store's SQL on one database, in its dialect's way. */
export interface SqlRunner {
  /** True on a SQLite file the store opened: see {@link SqlRunner.statement}. */
  readonly direct: boolean;
  /**
   * Run one statement written with `?` placeholders on `db` (the pool, or a transaction's connection).
   * `prepared`: a hot statement of fixed text, worth preparing once per connection where the store can
   * (a PostgreSQL pool it opened).
   */
  run<R = Record<string, unknown>>(
    db: Db,
    text: string,
    params?: unknown[],
    prepared?: boolean,
  ): Promise<RunResult<R>>;
  /** Run `fn` in one transaction and commit it (roll back if it throws), as the dialect opens one. */
  transaction<T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T>;
  /**
   * PostgreSQL, on a pool the store opened: run `statements` (with `?` placeholders) as ONE script, in one
   * round trip and one implicit transaction (`set_config(..., true)` in one lasts until the end of the
   * script), and return the rows of the last one. Parameters are written into the text, so only safe
   * integers are taken; undefined when they are not all such, or without a pool (the caller then runs the
   * statements in a transaction of its own).
   */
  script<R = Record<string, unknown>>(
    statements: ReadonlyArray<[string, unknown[]]>,
  ): Promise<R[]> | undefined;
  /** Run `fn` on one connection held throughout (SQLite: Kysely's single connection). */
  connection<T>(db: Db, fn: (conn: Db) => Promise<T>): Promise<T>;
  /**
   * Run `fn`, again from the start when it fails for contention alone (a deadlock victim, a SQLite file
   * still busy after the busy timeout). Every store operation is one statement or one transaction, or
   * idempotent steps of them, so a failed attempt left nothing behind.
   */
  retrying<T>(fn: () => Promise<T>): Promise<T>;
  /** ` FOR UPDATE` where transactions lock rows (see {@link RunnerDialect.rowLocks}); nothing elsewhere. */
  readonly forUpdate: string;
  /**
   * Split `rows` (one parameter array per row) into chunks that one multi-row statement can carry,
   * given the number of parameters of one row.
   */
  chunk(rows: unknown[][], width: number): unknown[][][];
  /** `(?, ?, ...), (?, ?, ...)` for `rows` rows of `width` values, cached per shape. */
  values(rows: number, width: number): string;
  /**
   * On a SQLite file the store opened itself, and `db` a connection this operation holds (a
   * transaction's): the prepared statement for `text`, to run directly (and synchronously) any number
   * of times. Undefined otherwise (other databases, a Kysely instance of the caller's, or `db` the
   * shared handle, whose connection must first be taken).
   */
  statement(db: Db, text: string): Database.Statement | undefined;
}

/** What the store can reach beyond Kysely, when it opened the database itself. */
export interface RunnerAccess {
  /** The store's Kysely instance: statements on it take Kysely's connection first (with `sqliteFile`). */
  root?: Db;
  /** SQLite: the open file, once Kysely has opened it. */
  sqliteFile?: () => SqliteFile | undefined;
  /** PostgreSQL: mark a text to be executed as a named prepared statement. */
  pgPrepare?: (text: string) => void;
  /** PostgreSQL: the pool, for scripts. */
  pgPool?: pg.Pool;
  /**
   * Fail a write statement whose driver reports no count of the rows it changed, instead of reading it
   * as 0: the store decides by those counts (was the key inserted, how many deliveries were new). Kysely's
   * own drivers always report it; a handle of the app's may not (see `app-transaction.ts`).
   */
  requireAffected?: boolean;
}

/** A statement whose count of changed rows the store may read. */
const WRITE = /^\s*(INSERT|UPDATE|DELETE)\b/i;
const RETURNING = /\bRETURNING\b/i;

/**
 * The runner for `dialect`. With `access` to a SQLite file the store opened, statements on a held connection
 * run on better-sqlite3 directly, without Kysely's executor: for a hot transaction of a few hundred
 * statements, the layers around each one cost more than SQLite's own work. With access to a PostgreSQL
 * pool the store opened, hot statements are prepared by name and scripts run in one round trip.
 */
export function createSqlRunner(dialect: RunnerDialect, access?: RunnerAccess): SqlRunner {
  const sqliteFile = access?.sqliteFile;
  const pgPrepare = access?.pgPrepare;
  const pgTexts = new Map<string, string>();
  const valueLists = new Map<string, string>();

  // Statements are written once with `?`; PostgreSQL wants `$1, $2, ...`. None of the store's SQL has
  // a `?` inside a literal or uses PostgreSQL's `?` JSON operators, so a plain scan is exact.
  const toPg = (text: string): string => {
    const hit = pgTexts.get(text);
    if (hit !== undefined) return hit;
    let n = 0;
    const converted = text.replace(/\?/g, () => `$${++n}`);
    // Only the fixed statements are worth keeping; bulk ones vary with their row count.
    if (text.length > 2048) return converted;
    if (pgTexts.size > 1024) pgTexts.clear();
    pgTexts.set(text, converted);
    return converted;
  };

  // Kysely hands out connection-bound instances while its connection is held; only the root takes it.
  const held = (db: Db, text: string): Database.Statement | undefined => {
    if (sqliteFile === undefined || db === access?.root) return undefined;
    return sqliteFile()?.prepare(text);
  };

  const runner: SqlRunner = {
    direct: sqliteFile !== undefined,
    forUpdate: dialect.rowLocks ? ' FOR UPDATE' : '',
    async run<R>(db: Db, text: string, params: unknown[] = [], prepared = false): Promise<RunResult<R>> {
      const statement = held(db, text);
      if (statement) {
        if (statement.reader) return { rows: statement.all(params) as R[], affected: 0 };
        return { rows: [], affected: statement.run(params).changes };
      }
      const sql = dialect.numberedPlaceholders ? toPg(text) : text;
      if (prepared) pgPrepare?.(sql);
      const result = await db.executeQuery<R>(CompiledQuery.raw(sql, params));
      // A write with RETURNING changed the rows it returned (Kysely's SQLite driver counts no others).
      if (
        result.numAffectedRows === undefined &&
        access?.requireAffected &&
        WRITE.test(text) &&
        !RETURNING.test(text)
      ) {
        throw new MailroomError(
          'TRANSACTION_REFUSED',
          'the connection does not report how many rows a statement changed, which the store relies on (a Kysely driver that runs every statement as a query, as over Prisma)',
        );
      }
      return { rows: result.rows as R[], affected: Number(result.numAffectedRows ?? 0) };
    },
    transaction: (db, fn) => dialect.transaction(db, fn, (conn, text) => runner.run(conn, text)),
    script<R>(statements: ReadonlyArray<[string, unknown[]]>): Promise<R[]> | undefined {
      // Only a PostgreSQL pool the store opened runs scripts.
      const pool = access?.pgPool;
      if (pool === undefined) return undefined;
      const texts: string[] = [];
      for (const [text, params] of statements) {
        if (!params.every((p) => Number.isSafeInteger(p))) return undefined;
        let n = 0;
        texts.push(text.replace(/\?/g, () => String(params[n++])));
      }
      return pool.query(texts.join(';\n')).then((result) => {
        const results = result as unknown as pg.QueryResult | pg.QueryResult[];
        const last = Array.isArray(results) ? results[results.length - 1] : results;
        return (last?.rows ?? []) as R[];
      });
    },
    connection: (db, fn) => db.connection().execute(fn),
    async retrying<T>(fn: () => Promise<T>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await fn();
        } catch (error) {
          if (attempt >= ATTEMPTS || !isTransient(error)) throw error;
          await sleep(Math.random() * 5 * 2 ** attempt);
        }
      }
    },
    chunk(rows: unknown[][], width: number): unknown[][][] {
      const maxRows = Math.max(
        1,
        Math.min(MAX_ROWS_PER_STATEMENT, Math.floor(dialect.maxParameters / width)),
      );
      const chunks: unknown[][][] = [];
      let current: unknown[][] = [];
      let bytes = 0;
      for (const row of rows) {
        const size = approximateBytes(row);
        if (current.length > 0 && (current.length >= maxRows || bytes + size > MAX_BYTES_PER_STATEMENT)) {
          chunks.push(current);
          current = [];
          bytes = 0;
        }
        current.push(row);
        bytes += size;
      }
      if (current.length > 0) chunks.push(current);
      return chunks;
    },
    statement: (db, text) => held(db, text),
    values(rows: number, width: number): string {
      const key = `${rows}x${width}`;
      const hit = valueLists.get(key);
      if (hit !== undefined) return hit;
      const tuple = `(${new Array(width).fill('?').join(', ')})`;
      const list = new Array(rows).fill(tuple).join(', ');
      if (valueLists.size > 1024) valueLists.clear();
      valueLists.set(key, list);
      return list;
    },
  };
  return runner;
}

function approximateBytes(row: unknown[]): number {
  let size = 0;
  for (const value of row) size += typeof value === 'string' ? value.length * 2 : 8;
  return size;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
