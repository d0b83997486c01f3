import type { Dialect, Kysely } from 'kysely';

/** The SQL databases the store speaks to. MariaDB counts as `mysql`. */
export type SqlKind = 'sqlite' | 'postgres' | 'mysql';

/** Open the database from a URL; the store owns the connections and closes them. */
export interface SqlUrlOptions {
  /**
   * Where the database is.
   * - `postgres://user:pass@host:5432/db` (or `postgresql://`); `?options=-c%20search_path%3Dmy_schema` picks a schema.
   *   `?pgbouncer=true` is {@link SqlUrlOptions.transactionPooling} (the parameter is not passed on to the server).
   * - `mysql://user:pass@host:3306/db` or `mariadb://...`.
   * - `sqlite:path/to/file.db`, `sqlite://path`, `file:path`, a plain path, or `:memory:`.
   * @example 'sqlite:.mailroom/mailroom.db'
   */
  url: string;
  /**
   * Connections in the pool (PostgreSQL, MySQL). SQLite always uses one connection.
   * @default 10
   */
  poolSize?: number;
  /**
   * PostgreSQL: the URL is a pooler in transaction mode (PgBouncer's `pool_mode = transaction`, Supavisor,
   * RDS Proxy), where consecutive statements of one connection may run on different server connections.
   * The store then keeps no state in the session: no statement is prepared by name (hot statements are
   * otherwise prepared once per connection, which a transaction pooler loses). Everything else the store
   * does is already transaction-scoped (planner settings with `set_config(..., true)`, the migration lock
   * inside the migration's transaction). Costs PostgreSQL a parse and plan per statement. Also set by
   * `?pgbouncer=true` in the URL. See docs/deployment.md.
   * @default false
   */
  transactionPooling?: boolean;
  /**
   * SQLite: how long a writer waits for another process's write lock before failing.
   * @default 5000
   */
  busyTimeoutMs?: number;
  /**
   * SQLite: the connection's page cache, in MiB (stores of one process share the connection of a file,
   * and the first to open it sets this). A larger cache keeps more of the indexes that a large import
   * writes at random positions in memory: a million profiles and deliveries in random address order went
   * in faster with 64 MiB than with 16 MiB (BENCHMARKS.md, "CSV sources"); a smaller cache lowers the
   * process's memory by the difference. The file's background thread (checkpoints, source pages) has a
   * cache of the same size on its own connection, filled only as far as it is used.
   * @default 64
   */
  sqliteCacheMiB?: number;
  /**
   * SQLite: free space, in MiB, kept on the database file's filesystem for recording what was already
   * accepted. Below it, new sends and broadcasts (and their idempotency keys) are refused with
   * `STORAGE_FULL` (HTTP 503 with `Retry-After`) before anything is written, while the worker goes on
   * delivering and recording outcomes in the space kept. `0` turns the check off (a full disk then fails
   * writes with `STORAGE_FULL` when SQLite finds no room).
   * @default 64
   */
  sqliteReserveMiB?: number;
  /**
   * SQLite: a page of a broadcast source (CSV rows, audience members) with at least this many deliveries
   * and profiles is written by the store's background thread, on a connection of its own, while the
   * event loop goes on (the worker parses the next pages meanwhile): on a file of a million CSV rows,
   * more rows per second than writing every page on the event loop (BENCHMARKS.md, "CSV sources"). `0`
   * sends every page with rows there; `Infinity` none. Other writes always run on the event loop, where a
   * thread hop would cost more than it saves.
   * @default 1024
   */
  sqliteWriterThreadRows?: number;
}

/** Use a Kysely instance you own; the store never destroys it. */
export interface SqlKyselyOptions<DB = unknown> {
  /** Your Kysely instance. Its tables are untouched except the `mailroom_*` ones the migrations create. */
  db: Kysely<DB>;
  /** Which database the instance talks to. */
  dialect: SqlKind;
}

/** Use a Kysely dialect (with a driver you configured); the store creates and owns the Kysely instance. */
export interface SqlDialectOptions {
  /** A Kysely dialect, for example `new PostgresDialect({ pool })`. */
  dialect: Dialect;
  /** Which database the dialect talks to. */
  kind: SqlKind;
}

/** Options of {@link sqlStore}: a URL, a Kysely instance, or a Kysely dialect. */
export type SqlStoreOptions<DB = unknown> = SqlUrlOptions | SqlKyselyOptions<DB> | SqlDialectOptions;
