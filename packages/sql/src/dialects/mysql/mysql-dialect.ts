import { sql } from 'kysely';
import type { SqlDialect } from '../sql-dialect.js';
import { mysqlClaim, mysqlRenew } from './mysql-claims.js';

/**
 * MySQL and MariaDB (mysql2): transactions at READ COMMITTED, no `RETURNING` and no partial indexes (the
 * queue tables carry a stored `open_at` column instead), locking reads pinned to their index, and
 * `INSERT IGNORE` / `ON DUPLICATE KEY UPDATE` for conflicts.
 */
export const mysqlDialect: SqlDialect = {
  kind: 'mysql',
  maxParameters: 65_535,
  numberedPlaceholders: false,
  rowLocks: true,
  // READ COMMITTED: locking reads take no gap locks and release the rows they pass over.
  transaction: (db, fn) => db.transaction().setIsolationLevel('read committed').execute(fn),

  jsonParsedByDriver: false,
  returning: false,
  openAtColumn: true,
  partialOpenAt: false,
  forcesIndexes: true,
  lockBeforeJoinedRead: false,
  forceIndex: (index) => ` FORCE INDEX (${index})`,
  unindexed: (column) => column,
  insertIgnore: (table, columns, values) => `INSERT IGNORE INTO ${table} (${columns}) VALUES ${values}`,
  onConflictUpdate: (_table, _key, sets) =>
    ` ON DUPLICATE KEY UPDATE ${sets({
      stored: (column) => column,
      incoming: (column) => `VALUES(${column})`,
    }).join(', ')}`,
  insertValues({ table, columns }, values, { update }) {
    const list = columns.join(', ');
    return update
      ? `INSERT INTO ${table} (${list}) VALUES ${values} ON DUPLICATE KEY UPDATE ${update.map((column) => `${column} = VALUES(${column})`).join(', ')}`
      : `INSERT IGNORE INTO ${table} (${list}) VALUES ${values}`;
  },
  limitedWhere: (_table, _key, where) => `WHERE ${where} LIMIT ?`,
  contains: (column) => `INSTR(${column}, ?) > 0`,
  greatest: (a, b) => `GREATEST(${a}, ${b})`,
  // JSON_VALUE: MariaDB has no `->>`.
  jsonText: (column, path) => `JSON_VALUE(${column}, '$.${path.join('.')}')`,
  // MariaDB reads a JSON true as '1', MySQL as 'true'.
  jsonIsTrue: (column, path) => `${mysqlDialect.jsonText(column, path)} IN ('true', '1')`,

  columnTypes: {
    id: sql`varchar(128)`,
    ref: sql`varchar(255)`,
    address: sql`varchar(320)`,
    short: sql`varchar(32)`,
    text: sql`longtext`,
    json: sql`longtext`,
    big: sql`bigint`,
    int: sql`integer`,
    bytes: sql`longblob`,
  },
  boundedKeys: true,
  // utf8mb4 with a binary collation, so that addresses compare exactly (the local part of an address is
  // case-sensitive) and sort bytewise; InnoDB for row locks.
  tableOptions: (table) =>
    table.modifyEnd(sql`engine = InnoDB default charset = utf8mb4 collate = utf8mb4_bin`),
  dropIndex: (schema, index, table) => schema.dropIndex(index).on(table),
  domainOf: (column) => sql`lower(substring_index(${sql.raw(column)}, '@', -1))`,
  // Kysely's migrator takes GET_LOCK.
  runMigrator: (db, migrate) => migrate(db, undefined),

  claims: (runner) => ({
    claim: (db, spec) => mysqlClaim(runner, db, spec),
    renew: (db, where, params, until) => mysqlRenew(runner, db, where, params, until),
  }),
  writeOutcomes: () => undefined,
  writeWebhookCompletions: () => undefined,

  oneConnection: false,
  takesPgClient: false,
  async inTransaction(runner, db) {
    // MySQL keeps a savepoint only inside a transaction: outside one, it is gone by the next statement.
    try {
      await runner.run(db, 'SAVEPOINT mailroom_probe');
      await runner.run(db, 'RELEASE SAVEPOINT mailroom_probe');
      return true;
    } catch {
      return false;
    }
  },
};
