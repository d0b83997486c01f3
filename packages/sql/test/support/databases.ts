/**
 * Per-run databases for the SQL store's tests: a fresh SQLite file, PostgreSQL schema or MariaDB/MySQL
 * database for every store a test asks for, so that runs (and tests) never see each other's rows, all
 * dropped when the test file ends. PostgreSQL and MySQL run on the servers {@link testServer} finds (the
 * environment variable's URL, else the standard local server); without one a suite skips, saying so, or
 * under `CI` fails.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@mailroom/core';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll } from 'vitest';
import type { SqlKind, SqlUrlOptions } from '../../src/index.js';
import { sqlStore } from '../../src/index.js';
import { STORE_ID_SETTING } from '../../src/roles/app-transaction.js';
import type { Pgbouncer } from './pgbouncer.js';
import { missingServerTest, type ServerKind, type TestServer, testServer } from './servers.js';

/** Both servers, probed once before any suite of the file is declared (suites are declared synchronously). */
const [postgres, mysqlServer] = await Promise.all([testServer('postgres'), testServer('mysql')]);
const SERVERS: Record<ServerKind, TestServer> = { postgres, mysql: mysqlServer };

/** A source of fresh, empty databases of one kind. */
export interface TestDatabases {
  readonly kind: SqlKind;
  /** A URL of a new, empty database (SQLite file, PostgreSQL schema or MySQL database). */
  create(): Promise<string>;
  /**
   * A URL of an empty, migrated database. SQLite: a new copy of a migrated file each time. PostgreSQL and MySQL: one
   * database for the whole test file, whose tables are emptied on every call (creating and migrating
   * a schema per test would dominate the run time).
   */
  empty(): Promise<string>;
  /** Drops everything `create` made. Registered with `afterAll` by {@link testDatabases}. */
  dropAll(): Promise<void>;
}

/**
 * The databases of `kind` for this test file, or undefined when its server does not answer (in which
 * case a skipped test and a warning say so, or, under `CI`, a failing test). Registers the cleanup with
 * `afterAll`.
 */
export function testDatabases(kind: SqlKind): TestDatabases | undefined {
  const server = kind === 'sqlite' ? undefined : SERVERS[kind];
  if (server?.problem !== undefined) {
    missingServerTest(server, `sql:${kind} tests`);
    return undefined;
  }
  const databases = server ? serverDatabases(server.kind, server.url) : sqliteDatabases();
  afterAll(() => databases.dropAll());
  return databases;
}

/** Stores opened on a database, so that a second store can be opened on the same one. */
const urls = new WeakMap<Store, string>();

/** A store on `url`, remembered so that {@link sameDatabase} can open another on the same database. */
export function storeOn(url: string, poolSize = 4, options: Partial<SqlUrlOptions> = {}): Store {
  const store = sqlStore({ ...options, url, poolSize });
  urls.set(store, url);
  return store;
}

/** Another store on the database of `store`, with its own connections, as another process would open. */
export function sameDatabase(store: Store): Store {
  const url = urls.get(store);
  if (!url) throw new Error('sameDatabase: the store was not opened by storeOn');
  return storeOn(url);
}

/**
 * One round trip that empties `tables` (PostgreSQL), or none when there are none. DELETE, not TRUNCATE:
 * TRUNCATE gives every table and index a new file, 0.4-1 s for the store's 41 tables even when they are
 * empty, before each of the kit's 200-odd cases; a DELETE of a case's few rows takes about a millisecond.
 * The end state is the same: the store's tables have no foreign keys, triggers or sequences.
 */
function deleteAllRows(tables: readonly string[]): string {
  return tables.length === 0 ? 'SELECT 1' : tables.map((table) => `DELETE FROM ${table};`).join(' ');
}

/**
 * Empties one migrated database before each of a file's cases, on one admin connection kept for the
 * file, the statement built once from the table list (the store's tables do not change after the
 * migration). A connection and an `information_schema` query per case cost the server about as much as
 * the case itself (a new backend with a cold catalog cache, ~25 ms of PostgreSQL's CPU, and ~90 ms of
 * wall under load, 200-odd times a file). A connection that fails is opened again once.
 */
interface Emptier {
  /** Deletes every row of the store's tables. */
  run(): Promise<void>;
  /** Closes the admin connection, if open. */
  close(): Promise<void>;
}

/** An {@link Emptier} on connections from `open`; `statement` builds the emptying statement on one. */
function emptier<C extends { end(): Promise<unknown> }>(
  open: () => Promise<C>,
  statement: (connection: C) => Promise<string>,
  execute: (connection: C, text: string) => Promise<unknown>,
): Emptier {
  let current: Promise<{ connection: C; text: string }> | undefined;
  const connect = () => {
    if (current) return current;
    const opening = open().then(async (connection) => {
      try {
        return { connection, text: await statement(connection) };
      } catch (error) {
        await connection.end().catch(() => undefined);
        throw error;
      }
    });
    current = opening;
    opening.catch(() => {
      if (current === opening) current = undefined;
    });
    return opening;
  };
  const close = async () => {
    const open = current;
    current = undefined;
    if (open) await (await open.catch(() => undefined))?.connection.end().catch(() => undefined);
  };
  return {
    async run() {
      const { connection, text } = await connect();
      try {
        await execute(connection, text);
      } catch {
        await close();
        const again = await connect();
        await execute(again.connection, again.text);
      }
    },
    close,
  };
}

/** A connected PostgreSQL client on `url`, whose errors after the fact are left to the next query. */
async function pgClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {}); // a dropped connection fails the next query, which opens a new one
  await client.connect();
  return client;
}

/** PostgreSQL: one statement of {@link deleteAllRows} for the store's tables in `schema`, qualified with `prefix`. */
async function pgEmptyingStatement(client: pg.Client, schema: string, prefix: string): Promise<string> {
  const tables = await client.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_name LIKE 'mailroom\\_%' AND table_name NOT LIKE 'mailroom\\_migrations%'",
    [schema],
  );
  return deleteAllRows(tables.rows.map((t) => `${prefix}${t.name}`));
}

function uniqueName(): string {
  return `mr_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

/**
 * PostgreSQL databases reached through `bouncer` (PgBouncer in transaction mode): a database per
 * `create` (PgBouncer does not pass a schema choice on), the shared one of `empty` emptied directly.
 */
export function pgbouncerDatabases(bouncer: Pgbouncer): TestDatabases {
  const created: Array<{ url: string; directUrl: string; drop(): Promise<void> }> = [];
  let shared: Promise<{ url: string; directUrl: string }> | undefined;
  let emptying: Emptier | undefined;
  const create = async () => {
    const database = await bouncer.database('mr_pgb');
    created.push(database);
    return database;
  };
  return {
    kind: 'postgres',
    create: async () => (await create()).url,
    async empty() {
      shared ??= create().then(async (database) => {
        const store = sqlStore({ url: database.url, poolSize: 1 });
        await store.init();
        await store.close();
        return database;
      });
      const { url, directUrl } = await shared;
      emptying ??= emptier(
        () => pgClient(directUrl),
        (client) => pgEmptyingStatement(client, 'public', ''),
        (client, text) => client.query(text),
      );
      await emptying.run();
      return url;
    },
    async dropAll() {
      await emptying?.close();
      for (const database of created.splice(0)) await database.drop();
    },
  };
}

/**
 * A migrated SQLite file in `dir` to copy for each case that needs an empty, migrated database, made
 * once: migrating a new file costs ~35 ms of CPU and ~150 ms of fsyncs, copying one ~3 ms, 200-odd
 * times a kit run. It is checkpointed (no `-wal` beside it) and has no store id, so that each copy's
 * first `init()` gives it one of its own, as a new database gets.
 */
export async function migratedSqliteFile(dir: string): Promise<string> {
  const file = join(dir, 'migrated-template.db');
  const store = sqlStore({ url: `sqlite:${file}`, poolSize: 1 });
  await store.init();
  await store.close();
  const database = new Database(file);
  try {
    database.prepare('DELETE FROM mailroom_settings WHERE name = ?').run(STORE_ID_SETTING);
    database.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    database.close();
  }
  if (existsSync(`${file}-wal`)) throw new Error(`${file}: its WAL file is still there`);
  return file;
}

function sqliteDatabases(): TestDatabases {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-sql-'));
  let n = 0;
  let template: Promise<string> | undefined;
  return {
    kind: 'sqlite',
    create: async () => `sqlite:${join(dir, `store-${++n}.db`)}`,
    async empty() {
      template ??= migratedSqliteFile(dir);
      const file = join(dir, `store-${++n}.db`);
      copyFileSync(await template, file);
      return `sqlite:${file}`;
    },
    dropAll: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

function serverDatabases(kind: ServerKind, base: string): TestDatabases {
  const created: string[] = [];
  let shared: Promise<string> | undefined;
  /** The URL of the file's shared database, migrated on first use, with every table emptied. */
  const emptied = async (create: () => Promise<string>, wipe: (url: string) => Promise<void>) => {
    shared ??= create().then(async (url) => {
      const store = sqlStore({ url, poolSize: 1 });
      await store.init();
      await store.close();
      return url;
    });
    const url = await shared;
    await wipe(url);
    return url;
  };
  /** The emptying of the file's shared database (one, so one emptier). */
  let emptying: Emptier | undefined;
  if (kind === 'postgres') {
    const admin = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      try {
        return await fn(client);
      } finally {
        await client.end();
      }
    };
    return {
      kind,
      async create() {
        const schema = uniqueName();
        await admin((client) => client.query(`CREATE SCHEMA ${schema}`));
        created.push(schema);
        const url = new URL(base);
        url.searchParams.set('options', `-c search_path=${schema}`);
        return url.toString();
      },
      empty() {
        return emptied(
          () => this.create(),
          async (url) => {
            const schema = new URL(url).searchParams.get('options')?.split('=')[1] ?? '';
            emptying ??= emptier(
              () => pgClient(base),
              (client) => pgEmptyingStatement(client, schema, `${schema}.`),
              (client, text) => client.query(text),
            );
            await emptying.run();
          },
        );
      },
      async dropAll() {
        await emptying?.close();
        if (created.length === 0) return;
        await admin(async (client) => {
          for (const schema of created.splice(0))
            await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        });
      },
    };
  }
  const mysqlAdmin = async () => {
    const connection = await mysql.createConnection({
      uri: base.replace(/^mariadb:/i, 'mysql:'),
      // The emptying below is one round trip of a statement per table.
      multipleStatements: true,
    });
    connection.on('error', () => {}); // a dropped connection fails the next query, which opens a new one
    return connection;
  };
  const admin = async <T>(fn: (connection: mysql.Connection) => Promise<T>): Promise<T> => {
    const connection = await mysqlAdmin();
    try {
      return await fn(connection);
    } finally {
      await connection.end();
    }
  };
  return {
    kind,
    async create() {
      const database = uniqueName();
      await admin((connection) => connection.query(`CREATE DATABASE ${database}`));
      created.push(database);
      const url = new URL(base.replace(/^mariadb:/i, 'mysql:'));
      url.pathname = `/${database}`;
      return url.toString();
    },
    empty() {
      return emptied(
        () => this.create(),
        async (url) => {
          const database = new URL(url).pathname.slice(1);
          emptying ??= emptier(
            () => mysqlAdmin(),
            async (connection) => {
              const [tables] = await connection.query<mysql.RowDataPacket[]>(
                "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ? AND table_name LIKE 'mailroom\\_%' AND table_name NOT LIKE 'mailroom\\_migrations%'",
                [database],
              );
              return (
                tables.map((table) => `DELETE FROM ${database}.${String(table.name)};`).join(' ') ||
                'SELECT 1'
              );
            },
            (connection, text) => connection.query(text),
          );
          await emptying.run();
        },
      );
    },
    async dropAll() {
      await emptying?.close();
      if (created.length === 0) return;
      await admin(async (connection) => {
        for (const database of created.splice(0))
          await connection.query(`DROP DATABASE IF EXISTS ${database}`);
      });
    },
  };
}
