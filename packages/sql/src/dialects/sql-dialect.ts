import type { BatchWrite, ProfileUpsert, ProfileUpsertOptions } from '@mailroom/core';
import type { CreateTableBuilder, DropIndexBuilder, Expression, SchemaModule } from 'kysely';
import type { ClaimSpec } from '../claims/claim-spec.js';
import type { SqlClaims } from '../claims/sql-claims.js';
import type { Db } from '../connection/connect.js';
import type { SqlKind } from '../connection/options.js';
import type { RunnerDialect, SqlRunner } from '../connection/sql-runner.js';
import type { Codec } from '../rows/codec.js';
import type { OutcomeItem } from '../rows/outcome-rows.js';
import type { WebhookCompletion } from '../rows/webhook-outcome-rows.js';
import type { InsertOptions, InsertTarget } from '../writes/insert-target.js';
import type { ColumnTypes } from './column-types.js';

/** A statement and its parameters, with `?` placeholders. */
export interface Statement {
  text: string;
  params: unknown[];
}

/** The two sides of a row whose key exists, for the assignments of an upsert. */
export interface UpsertRefs {
  /** The value stored in the existing row, for example `mailroom_soft_bounces.soft_count`. */
  stored(column: string): string;
  /** The value of the row being inserted, for example `excluded.updated_at`. */
  incoming(column: string): string;
}

/** A dialect's claims on one runner (SQLite's keep rowid hints between a claim and its outcome). */
export interface DialectClaims {
  /** Claim up to `spec.limit` due rows and return them as written, decoded (see `SqlClaims.claim`). */
  claim<T>(db: Db, spec: ClaimSpec<T>): Promise<T[]>;
  /**
   * Run an `ORDER BY <due index> LIMIT` read or claim so that it walks the due index in order
   * (PostgreSQL's planner settings). Absent: the statement is run as it is.
   */
  inDueOrder?<R>(db: Db, text: string, params: unknown[]): Promise<R[]>;
  /**
   * Extend to `until` the leases of the deliveries matching `where` and return their ids, where the
   * dialect has no `UPDATE ... RETURNING`. Undefined: one `UPDATE ... RETURNING id`.
   */
  renew?(db: Db, where: string, params: unknown[], until: number): Promise<string[]>;
  /** The rowid at which a claim found the row `id`, once (see `SqlClaims.takeRowid`); absent: none kept. */
  takeRowid?(id: string): number | undefined;
}

/**
 * Everything that differs between the store's databases, as kysely keeps a dialect per database: each
 * folder `dialects/<db>/` exports one object of this shape, and the rest of the package asks it rather
 * than testing which database it is on. `dialect-of.ts` is where the object is chosen.
 */
export interface SqlDialect extends RunnerDialect {
  /** Which database this is (MariaDB counts as `mysql`); for names and messages, never for branching. */
  readonly kind: SqlKind;

  // Rows and statements

  /** The driver returns JSON columns parsed (PostgreSQL's `jsonb`); elsewhere they come back as text. */
  readonly jsonParsedByDriver: boolean;
  /**
   * `INSERT ... RETURNING` and `UPDATE ... RETURNING` exist. Without (MySQL), an insert cannot say which
   * rows it inserted, and a lease renewal reads its rows back (see {@link DialectClaims.renew}).
   */
  readonly returning: boolean;
  /**
   * The queue tables (deliveries, webhook messages) carry `open_at`, a stored column that is the attempt
   * time of open rows and null once settled, and index it: the dialect has no partial indexes (MySQL).
   * Elsewhere the due index is partial (`WHERE status IN (...)`) on `next_attempt_at`.
   */
  readonly openAtColumn: boolean;
  /**
   * The deliveries carry `open_at` too, a stored generated column, and their indexes of open deliveries
   * (due, by mailing) are partial on `open_at IS NOT NULL` (PostgreSQL, migration 034): the claim then
   * changes no indexed column and is a HOT update. A read of open deliveries says `open_at IS NOT NULL`
   * (`roles/open-deliveries.ts`) so that the planner can use those indexes. The same migration indexes
   * the content kept by `created_at` instead of `updated_at` (which the claim changes).
   */
  readonly partialOpenAt: boolean;
  /**
   * The store pins the plans of locking reads and writes to an index (`FORCE INDEX`, see
   * {@link SqlDialect.forceIndex}): InnoDB locks every row a locking read looks at, and on a small table
   * the optimizer would scan. The claim then checks each candidate's mailing by primary key.
   */
  readonly forcesIndexes: boolean;
  /**
   * A locking read that waited for a row lock reads the rows it joins from the snapshot taken before it
   * waited (PostgreSQL at READ COMMITTED): the lock is taken first, alone, then the joined rows are read.
   */
  readonly lockBeforeJoinedRead: boolean;
  /** ` FORCE INDEX (index)` after a table name where the dialect pins plans; nothing elsewhere. */
  forceIndex(index: string): string;
  /**
   * `column` in a condition the planner must not serve from that column's index (SQLite's `+column`,
   * whose planner would walk it for the order it gives); the column itself where planners choose well.
   */
  unindexed(column: string): string;
  /**
   * An `INSERT` of `values` into `columns` of `table` that skips a row whose unique `key` exists
   * (`INSERT IGNORE` on MySQL, `ON CONFLICT (key) DO NOTHING` elsewhere).
   */
  insertIgnore(table: string, columns: string, values: string, key: string): string;
  /**
   * The clause after `INSERT INTO table (...) VALUES ...` that, for a row whose unique `key` exists,
   * applies the assignments `sets` builds from the stored and incoming values instead (with its
   * leading space): `ON DUPLICATE KEY UPDATE` on MySQL, `ON CONFLICT (key) DO UPDATE SET` elsewhere.
   */
  onConflictUpdate(table: string, key: string, sets: (refs: UpsertRefs) => string[]): string;
  /**
   * The `WHERE` of an `UPDATE` or `DELETE` of `table` limited to `?` rows matching `where`, the rows
   * named by their `key` columns: MySQL takes `LIMIT` on the statement itself (and refuses it in an `IN`
   * subquery of the table being changed); elsewhere the key is picked by a limited subquery.
   */
  limitedWhere(table: string, key: readonly string[], where: string): string;
  /** A byte-exact test that `column` contains the `?` parameter (LIKE folds case on SQLite). */
  contains(column: string): string;
  /** The greater of two values (`MAX(a, b)` on SQLite, `GREATEST(a, b)` elsewhere). */
  greatest(a: string, b: string): string;
  /** The text of the JSON field at `path` of `column`, or null. */
  jsonText(column: string, path: readonly string[]): string;
  /** True when the JSON field at `path` of `column` is the JSON `true` (as each database reads it back). */
  jsonIsTrue(column: string, path: readonly string[]): string;

  // Schema

  /** The column types of the schema: keys sort bytewise everywhere, as the in-memory store sorts. */
  readonly columnTypes: ColumnTypes;
  /**
   * Key columns have a declared length (MySQL's `varchar`): migration 002 widens the idempotency key
   * to 256 characters. Elsewhere keys are unbounded text.
   */
  readonly boundedKeys: boolean;
  /** A `CREATE TABLE` with the dialect's table options (MySQL: InnoDB, utf8mb4 with a binary collation). */
  tableOptions<TB extends string, C extends string>(
    table: CreateTableBuilder<TB, C>,
  ): CreateTableBuilder<TB, C>;
  /** `DROP INDEX index`, on `table` where indexes belong to their table (MySQL). */
  dropIndex(schema: SchemaModule, index: string, table: string): DropIndexBuilder;
  /** The lower-cased domain of the address in `column` (migration 008). */
  domainOf(column: string): Expression<unknown>;
  /**
   * Run the migrator (`migrate`) so that concurrent runs are safe: on SQLite in one `BEGIN IMMEDIATE`
   * transaction; on PostgreSQL in one transaction of its own that holds the migration lock too, with the
   * connection's own schema named (Kysely's migrator would otherwise look for its table in every schema);
   * MySQL as it is (Kysely takes `GET_LOCK`). `inTransaction`: `migrate` runs inside a transaction the
   * dialect opened, so the migrator must not open its own.
   */
  runMigrator(
    db: Db,
    migrate: (db: Db, schema: string | undefined, inTransaction?: boolean) => Promise<void>,
  ): Promise<void>;

  // Claims and writes

  /** The dialect's claims on `runner` (one per store: SQLite's keep rowid hints). */
  claims(runner: SqlRunner): DialectClaims;
  /**
   * All of `rows` in one statement where the dialect has one for any row count (PostgreSQL's `unnest`),
   * or undefined: the caller then writes `VALUES` lists chunked under the limits.
   */
  insertAll?(target: InsertTarget, rows: unknown[][], options: InsertOptions): Statement;
  /**
   * The multi-row `INSERT` of one chunk (`values` its `VALUES` list), skipping or updating rows whose key
   * exists as `options` says.
   */
  insertValues(target: InsertTarget, values: string, options: InsertOptions): string;
  /**
   * Upsert and merge `rows` (sorted by address) in SQL, in as few statements as the dialect can, and
   * add them to `options.groupId`. Resolves false when it cannot (an address repeats): the caller then
   * merges in JavaScript. Otherwise resolves the rows it left for the caller to merge in JavaScript (by
   * the rule, with its traits cap: profiles too big to merge in SQL), in order; empty when none.
   * Absent: always the caller.
   */
  upsertProfiles?(
    runner: SqlRunner,
    codec: Codec,
    tx: Db,
    projectId: string,
    rows: readonly ProfileUpsert[],
    options: ProfileUpsertOptions,
    at: number,
  ): Promise<false | readonly ProfileUpsert[]>;
  /** A whole `commitBatch` as one statement, where the dialect has one (PostgreSQL); else undefined. */
  commitBatch?(codec: Codec, batchWrite: BatchWrite): Statement | undefined;
  /**
   * Write one group of delivery outcomes, fenced by their tokens, outside any transaction: one statement
   * is its own transaction (PostgreSQL). Absent: the caller opens a transaction.
   */
  writeOutcomesAlone?(
    db: Db,
    runner: SqlRunner,
    codec: Codec,
    group: readonly OutcomeItem[],
  ): Promise<boolean[]>;
  /**
   * Write one group of delivery outcomes and the events of their outboxes (those whose fence held) in one
   * statement, outside any transaction (PostgreSQL). Absent, or undefined for a group whose outboxes hold
   * more than events: the caller opens a transaction.
   */
  writeOutcomesWithEvents?(
    db: Db,
    runner: SqlRunner,
    codec: Codec,
    group: readonly OutcomeItem[],
  ): Promise<boolean[] | undefined>;
  /**
   * Write one group of delivery outcomes on `tx` by the dialect's fastest path and say which fences
   * held, or undefined where it has none for this runner: the caller then runs one update per outcome.
   */
  writeOutcomes(
    tx: Db,
    runner: SqlRunner,
    claims: SqlClaims,
    codec: Codec,
    group: readonly OutcomeItem[],
  ): boolean[] | Promise<boolean[]> | undefined;
  /**
   * Write recorded webhook attempts on `tx` by the dialect's fastest path and say which fences held, or
   * undefined where it has none for this runner (one update per message).
   */
  writeWebhookCompletions(
    runner: SqlRunner,
    claims: SqlClaims,
    tx: Db,
    items: readonly WebhookCompletion[],
  ): boolean[] | Promise<boolean[]> | undefined;

  // The app's transactions

  /**
   * The store's one connection is the only one to the database in this process (SQLite): an app's
   * transaction is taken only from the store's own Kysely instance, and the migrations cannot run while
   * it is open (they would wait for its connection with the event loop blocked).
   */
  readonly oneConnection: boolean;
  /** A `pg` client inside `BEGIN` is taken as an app's transaction (PostgreSQL). */
  readonly takesPgClient: boolean;
  /**
   * Whether `db` is inside an open transaction, where only a probe can tell (MySQL forgets a savepoint
   * made outside one by the next statement). Absent where the savepoint itself fails outside one.
   */
  inTransaction?(runner: SqlRunner, db: Db): Promise<boolean>;
}
