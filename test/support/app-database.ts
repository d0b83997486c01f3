/**
 * An app's own database for the tests of sending inside the app's transaction: the app's Kysely instance
 * (SQLite file, PostgreSQL schema or MariaDB/MySQL database), its own `app_orders` table, and the Mailroom
 * store on the same database, opened the way an app would:
 * - SQLite: `sqlStore({ db })` on the app's very instance (the only way on SQLite);
 * - PostgreSQL: `sqlStore({ url })`, a pool of the store's own, so the transaction is checked by the
 *   database's id;
 * - MariaDB/MySQL: `sqlStore({ db })` on the app's instance.
 * Used in-process by the tests and in a child process by the crash test (`app-transaction-child.ts`).
 */
import type { Store } from '@mailroom/core';
import { sqlStore } from '@mailroom/sql';
import Database from 'better-sqlite3';
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';

/** The databases the store speaks to. */
export type AppKind = 'sqlite' | 'postgres' | 'mysql';

/** The app's own table. */
export interface AppTables {
  app_orders: { id: string; customer: string };
}

/** The app's database, its store, and what the tests read of both. */
export interface AppDatabase {
  readonly kind: AppKind;
  /** The app's Kysely instance. */
  readonly db: Kysely<AppTables>;
  /** The store, on the same database. */
  readonly store: Store;
  /** Rows in each Mailroom table, by table name. */
  countRows(): Promise<Record<string, number>>;
  /** The ids of the app's orders, sorted. */
  orders(): Promise<string[]>;
  close(): Promise<void>;
}

/** The app's Kysely instance on `url` (`sqlite:PATH`, `postgres://...`, `mysql://...`). */
export function appKysely(kind: AppKind, url: string, poolSize = 10): Kysely<AppTables> {
  if (kind === 'sqlite') {
    const path = url.replace(/^sqlite:/, '');
    return new Kysely<AppTables>({
      dialect: new SqliteDialect({
        database: async () => {
          const database = new Database(path);
          database.pragma('journal_mode = WAL');
          database.pragma('busy_timeout = 5000');
          return database;
        },
      }),
    });
  }
  if (kind === 'postgres') {
    const pool = new pg.Pool({ connectionString: url, max: poolSize });
    pool.on('error', () => undefined);
    return new Kysely<AppTables>({ dialect: new PostgresDialect({ pool }) });
  }
  const pool = createPool({ uri: url, connectionLimit: poolSize, charset: 'utf8mb4' });
  return new Kysely<AppTables>({ dialect: new MysqlDialect({ pool }) });
}

/** Opens the app's database on `url`: its table (created if missing) and the store, initialized. */
export async function openAppDatabase(kind: AppKind, url: string, poolSize = 10): Promise<AppDatabase> {
  const db = appKysely(kind, url, poolSize);
  await db.schema
    .createTable('app_orders')
    .ifNotExists()
    .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('customer', 'varchar(255)', (c) => c.notNull())
    .execute();
  const store =
    kind === 'postgres'
      ? sqlStore({ url, poolSize: 4 })
      : sqlStore({ db: db as Kysely<unknown>, dialect: kind });
  await store.init();
  return {
    kind,
    db,
    store,
    async countRows() {
      const tables = await mailroomTables(db, kind);
      const counts: Record<string, number> = {};
      for (const table of tables) {
        const { rows } = await sql<{
          n: number | string;
        }>`SELECT COUNT(*) AS n FROM ${sql.table(table)}`.execute(db);
        counts[table] = Number(rows[0]?.n ?? 0);
      }
      return counts;
    },
    async orders() {
      const rows = await db.selectFrom('app_orders').select('id').orderBy('id').execute();
      return rows.map((row) => row.id);
    },
    async close() {
      await store.close();
      await db.destroy();
    },
  };
}

/** Every Mailroom table of the database (migration bookkeeping included: it must not change either). */
async function mailroomTables(db: Kysely<AppTables>, kind: AppKind): Promise<string[]> {
  const query =
    kind === 'sqlite'
      ? sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'mailroom%'`
      : kind === 'postgres'
        ? sql<{
            name: string;
          }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name LIKE 'mailroom%'`
        : sql<{
            name: string;
          }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE 'mailroom%'`;
  const { rows } = await query.execute(db);
  const names = rows.map((row) => String(row.name)).sort();
  if (names.length < 10) throw new Error(`expected the Mailroom tables, found ${names.join(', ')}`);
  return names;
}
