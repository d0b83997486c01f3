import { sql } from 'kysely';
import { onConflictStatements } from '../on-conflict.js';
import type { SqlDialect } from '../sql-dialect.js';
import { pgClaim, pgInDueOrder } from './postgres-claims.js';
import { writePostgres, writePostgresWithEvents, writeWebhooksPostgres } from './postgres-completions.js';
import { pgInsert } from './postgres-insert.js';
import { pgAddMembers, pgBigProfiles, pgCommitBatch, pgUpsertProfiles } from './postgres-statements.js';

// COLLATE "C": byte order, so ORDER BY address and keyset paging agree across databases.
const key = sql`text collate "C"`;

/**
 * PostgreSQL (pg): `$n` placeholders, row locks with `SKIP LOCKED` claims walking a partial due index,
 * `jsonb`, and one-statement writes over `unnest` arrays (a whole `commitBatch`, a group of outcomes).
 */
/** The migrations' transaction-scoped advisory lock ("mailroom" in ASCII, as a bigint). */
const MIGRATION_XACT_LOCK = '7881702030052610925';

export const postgresDialect: SqlDialect = {
  kind: 'postgres',
  maxParameters: 65_535,
  numberedPlaceholders: true,
  rowLocks: true,
  transaction: (db, fn) => db.transaction().execute(fn),

  jsonParsedByDriver: true,
  returning: true,
  openAtColumn: false,
  partialOpenAt: true,
  forcesIndexes: false,
  lockBeforeJoinedRead: true,
  forceIndex: () => '',
  unindexed: (column) => column,
  ...onConflictStatements,
  contains: (column) => `strpos(${column}, ?) > 0`,
  greatest: (a, b) => `GREATEST(${a}, ${b})`,
  jsonText: (column, path) =>
    path.length === 1 ? `${column} ->> '${path[0]}'` : `${column} #>> '{${path.join(',')}}'`,
  jsonIsTrue: (column, path) => `${postgresDialect.jsonText(column, path)} = 'true'`,

  columnTypes: {
    id: key,
    ref: key,
    address: key,
    short: sql`text`,
    text: sql`text`,
    json: sql`jsonb`,
    big: sql`bigint`,
    int: sql`integer`,
    bytes: sql`bytea`,
  },
  boundedKeys: false,
  tableOptions: (table) => table,
  dropIndex: (schema, index) => schema.dropIndex(index),
  domainOf: (column) => sql`lower(split_part(${sql.raw(column)}, '@', 2))`,
  // One transaction for the whole run, the migrator's lock included: Kysely takes its advisory lock on
  // the session before its own transaction, and behind a pooler in transaction mode (PgBouncer) the lock,
  // the migrations and the unlock could each run on another server connection, leaving the lock held
  // there for good. Inside one transaction they share one server connection whatever the pooling. The
  // transaction-scoped lock taken first is held until the commit (Kysely's is let go just before it), so
  // a second process reads the migration table only once the first one's migrations are visible.
  runMigrator: (db, migrate) =>
    db.connection().execute(async (conn) => {
      await sql`begin`.execute(conn);
      try {
        await sql`select pg_advisory_xact_lock(${sql.raw(MIGRATION_XACT_LOCK)})`.execute(conn);
        // Without a schema, Kysely's migrator looks for its table in every schema of the database and may
        // find another tenant's; name the schema the connection actually uses.
        const schema =
          (await sql<{ schema: string | null }>`select current_schema() as schema`.execute(conn)).rows[0]
            ?.schema ?? undefined;
        await migrate(conn, schema, true);
        await sql`commit`.execute(conn);
      } catch (error) {
        await sql`rollback`.execute(conn).catch(() => undefined);
        throw error;
      }
    }),

  claims: (runner) => ({
    claim: (db, spec) => pgClaim(runner, db, spec),
    inDueOrder: (db, text, params) => pgInDueOrder(runner, db, text, params),
  }),
  insertAll: (target, rows, options) => pgInsert(target, rows, options),
  async upsertProfiles(runner, codec, tx, projectId, rows, options, at) {
    // One statement, the merge in SQL (see pgUpsertProfiles), unless an address repeats.
    const upsert = pgUpsertProfiles(codec, projectId, rows, options, at);
    if (!upsert) return false;
    await runner.run(tx, upsert.text, upsert.params);
    if (options.groupId) {
      const addresses = rows.map((row) => row.address);
      const members = pgAddMembers(options.groupId, projectId, addresses, at);
      await runner.run(tx, members.text, members.params);
    }
    // Profiles too big to merge in SQL (the traits cap): left to the merge by the rule.
    const probe = pgBigProfiles(codec, projectId, rows);
    if (!probe) return [];
    const { rows: found } = await runner.run<{ address: string }>(tx, probe.text, probe.params);
    if (found.length === 0) return [];
    const big = new Set(found.map((row) => String(row.address)));
    return rows.filter((row) => big.has(row.address));
  },
  commitBatch: (codec, batchWrite) => pgCommitBatch(codec, batchWrite),
  writeOutcomesAlone: (db, runner, codec, group) => writePostgres(db, runner, codec, group),
  writeOutcomesWithEvents: (db, runner, codec, group) => writePostgresWithEvents(db, runner, codec, group),
  writeOutcomes: (tx, runner, _claims, codec, group) => writePostgres(tx, runner, codec, group),
  writeWebhookCompletions: (runner, _claims, tx, items) => writeWebhooksPostgres(runner, tx, items),

  oneConnection: false,
  takesPgClient: true,
};
