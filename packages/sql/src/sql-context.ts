import type { SqlClaims } from './claims/sql-claims.js';
import type { Db } from './connection/connect.js';
import type { SqlRunner } from './connection/sql-runner.js';
import type { SqlDialect } from './dialects/sql-dialect.js';
import type { Codec, Row } from './rows/codec.js';
import type { BulkWrites } from './writes/bulk-writes.js';

/** Keys per `IN (...)` list. */
export const IN_LIST_SIZE = 500;

/** How {@link SqlContext.guard} runs one operation. */
export interface GuardOptions {
  /**
   * Retry the operation from the start when it failed for contention alone. `false` for operations whose
   * parts commit on their own (a retry would report a part written by the first attempt as not written).
   * @default true
   */
  retry?: boolean;
  /**
   * The record a unique violation means already exists, in words (`audience group vip`, with the
   * project), so that the `CONFLICT` names it rather than a table and its columns.
   * @example { exists: { what: `sender ${sender.address}`, projectId: sender.projectId } }
   */
  exists?: { what: string; projectId: string };
}

/**
 * What every role of the SQL store shares: the database, the runner and codec of its dialect, the
 * bulk writes and claims built on them, the guard every operation runs in, and a
 * few statement helpers. Built once by `sqlStore()`; the roles (`roles/*.ts`) read it, never change it.
 */
export interface SqlContext {
  /** The store's name, `sql:<kind>`, for errors. */
  readonly name: string;
  /** What differs between the databases: the roles ask it, never which database the store is on. */
  readonly dialect: SqlDialect;
  /** The database (the store's own, or the Kysely instance it was given). */
  readonly db: Db;
  /** Runs statements on `db` or a transaction of it, in the dialect's way. */
  readonly runner: SqlRunner;
  /** Rows to records and back. */
  readonly codec: Codec;
  /** Set-based inserts of deliveries and upserts of profiles. */
  readonly bulk: BulkWrites;
  /** The lease primitives (claim, renew, fenced outcome). */
  readonly claims: SqlClaims;
  /**
   * Runs one operation: refused once the store is closed, retried when it failed for contention alone,
   * and with any error turned into the store's `MailroomError`. `retry: false` for operations whose parts
   * commit on their own; `exists` names the record a unique violation means exists (see
   * {@link GuardOptions}).
   */
  readonly guard: <T>(operation: string, fn: () => Promise<T>, options?: GuardOptions) => Promise<T>;
  /** The rows of a query, on `db` or `on`. */
  readonly all: (text: string, params?: unknown[], on?: Db) => Promise<Row[]>;
  /** The first row of a query, on `db` or `on`. */
  readonly first: (text: string, params?: unknown[], on?: Db) => Promise<Row | undefined>;
  /** Runs a write; returns the rows it changed. */
  readonly write: (text: string, params?: unknown[], on?: Db) => Promise<number>;
  /** `INSERT ... ON CONFLICT (key) DO UPDATE` that replaces every column, or MySQL's equivalent. */
  readonly upsertAll: (table: string, columns: readonly string[], key: string) => string;
  /** The `AND column > ?` condition of a page after a cursor, and its parameter (none for the first page). */
  readonly pageAfter: (after: string | null | undefined, column: string) => [string, unknown[]];
}

/** The context of one store, with its statement helpers. */
export function createSqlContext(
  parts: Omit<SqlContext, 'all' | 'first' | 'write' | 'upsertAll' | 'pageAfter'>,
): SqlContext {
  const { db, runner, dialect } = parts;
  const all = async (text: string, params: unknown[] = [], on: Db = db): Promise<Row[]> =>
    (await runner.run<Row>(on, text, params)).rows;
  const first = async (text: string, params: unknown[] = [], on: Db = db): Promise<Row | undefined> =>
    (await runner.run<Row>(on, text, params)).rows[0];
  const write = async (text: string, params: unknown[] = [], on: Db = db): Promise<number> =>
    (await runner.run(on, text, params)).affected;
  /** `INSERT ... ON CONFLICT (key) DO UPDATE` that replaces every column, or MySQL's equivalent. */
  const upsertAll = (table: string, columns: readonly string[], key: string): string => {
    const head = `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${runner.values(1, columns.length)}`;
    return `${head}${dialect.onConflictUpdate(table, key, ({ incoming }) => columns.map((col) => `${col} = ${incoming(col)}`))}`;
  };
  const pageAfter = (after: string | null | undefined, column: string): [string, unknown[]] =>
    after === undefined || after === null ? ['', []] : [` AND ${column} > ?`, [after]];
  return { ...parts, all, first, write, upsertAll, pageAfter };
}
