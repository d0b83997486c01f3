import { sql } from 'kysely';
import { onConflictStatements } from '../on-conflict.js';
import type { SqlDialect } from '../sql-dialect.js';
import { createSqliteClaims } from './sqlite-claims.js';
import { writeSqlite, writeSqliteFile, writeWebhooksSqliteFile } from './sqlite-completions.js';

/**
 * SQLite (better-sqlite3): one writer at a time, so write transactions take the lock up front and rows
 * need no locks or ordering; partial indexes and `RETURNING`; on a file the store opened, claims and
 * outcomes run prepared statements directly on the driver (`runner.direct`).
 */
export const sqliteDialect: SqlDialect = {
  kind: 'sqlite',
  maxParameters: 32_766,
  numberedPlaceholders: false,
  rowLocks: false,
  // The write lock up front (`BEGIN IMMEDIATE`): a deferred transaction that reads and then writes can
  // fail with `SQLITE_BUSY` without waiting when another process wrote meanwhile.
  transaction: (db, fn, run) =>
    db.connection().execute(async (conn) => {
      await run(conn, 'BEGIN IMMEDIATE');
      try {
        const result = await fn(conn);
        await run(conn, 'COMMIT');
        return result;
      } catch (error) {
        // SQLite may already have rolled back on its own (for example after SQLITE_FULL).
        await run(conn, 'ROLLBACK').catch(() => undefined);
        throw error;
      }
    }),

  jsonParsedByDriver: false,
  returning: true,
  openAtColumn: false,
  partialOpenAt: false,
  forcesIndexes: false,
  lockBeforeJoinedRead: false,
  forceIndex: () => '',
  unindexed: (column) => `+${column}`,
  ...onConflictStatements,
  contains: (column) => `instr(${column}, ?) > 0`,
  greatest: (a, b) => `MAX(${a}, ${b})`,
  jsonText: (column, path) => `${column} ->> '$.${path.join('.')}'`,
  // `->>` reads a JSON true as 1.
  jsonIsTrue: (column, path) => `${sqliteDialect.jsonText(column, path)} = 1`,

  columnTypes: {
    id: sql`text`,
    ref: sql`text`,
    address: sql`text`,
    short: sql`text`,
    text: sql`text`,
    json: sql`text`,
    big: sql`integer`,
    int: sql`integer`,
    bytes: sql`blob`,
  },
  boundedKeys: false,
  tableOptions: (table) => table,
  dropIndex: (schema, index) => schema.dropIndex(index),
  domainOf: (column) => sql`lower(substr(${sql.raw(column)}, instr(${sql.raw(column)}, '@') + 1))`,
  // The whole run is one `BEGIN IMMEDIATE` transaction: a second process waits for the first and then
  // finds nothing to do.
  runMigrator: (db, migrate) =>
    db.connection().execute(async (conn) => {
      await sql`begin immediate`.execute(conn);
      try {
        await migrate(conn, undefined);
        await sql`commit`.execute(conn);
      } catch (error) {
        await sql`rollback`.execute(conn).catch(() => undefined);
        throw error;
      }
    }),

  claims: (runner) => createSqliteClaims(runner),
  writeOutcomes: (tx, runner, claims, codec, group) =>
    runner.direct ? writeSqliteFile(tx, runner, claims, group) : writeSqlite(tx, runner, codec, group),
  writeWebhookCompletions: (runner, claims, tx, items) =>
    runner.direct ? writeWebhooksSqliteFile(runner, claims, tx, items) : undefined,

  oneConnection: true,
  takesPgClient: false,
};
