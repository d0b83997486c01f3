import type { Kysely, Migration, MigrationProvider } from 'kysely';
import { Migrator, sql } from 'kysely';
import type { Db } from '../connection/connect.js';
import type { SqlKind } from '../connection/options.js';
import { dialectOf } from '../dialects/dialect-of.js';
import type { SqlDialect } from '../dialects/sql-dialect.js';
import { apiKeys } from './migration-api-keys.js';
import { automationsSchema } from './migration-automations.js';
import { deliveryOpenIndex } from './migration-delivery-open-index.js';
import { deliveryPriority } from './migration-delivery-priority.js';
import { destinationLimitsSchema } from './migration-destination-limits.js';
import { domainsSchema } from './migration-domains.js';
import { eventSeries } from './migration-event-series.js';
import { eventsAndWebhooks } from './migration-events.js';
import { hotClaims } from './migration-hot-claims.js';
import { inboundSignalsMigration } from './migration-inbound.js';
import { keyNames } from './migration-key-names.js';
import { openBroadcasts } from './migration-open-broadcasts.js';
import { pausesSchema } from './migration-pauses.js';
import { preferencesSchema } from './migration-preferences.js';
import { receivedMailSchema } from './migration-received-mail.js';
import { receivingSchema } from './migration-receiving.js';
import { signalReasons } from './migration-signal-reasons.js';
import { signupFormsSchema } from './migration-signup-forms.js';
import { stepCountsSchema } from './migration-step-counts.js';
import { suppressionCase } from './migration-suppression-case.js';
import { topicsConsentSchema } from './migration-topics-consent.js';
import { trackingSchema } from './migration-tracking.js';
import { unsubscribedFolded } from './migration-unsubscribed-folded.js';
import { webhookCircuit } from './migration-webhook-circuit.js';
import { webhookPriority } from './migration-webhook-priority.js';

/** Name of the table that records applied migrations. */
export const MIGRATION_TABLE = 'mailroom_migrations';
/** Name of the table Kysely's migrator keeps its lock row in. */
export const MIGRATION_LOCK_TABLE = 'mailroom_migrations_lock';

/** Attempts of a whole migration run when another process raced it (SQLite busy, DDL races). */
const MIGRATE_ATTEMPTS = 6;

/** 001: every table of the records in `@mailroom/core`, with the unique keys that carry invariants. */
function initialSchema(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_projects')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('name', t.text, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull()),
        )
        .execute();

      await dialect
        .tableOptions(
          s
            .createTable('mailroom_project_secrets')
            .addColumn('hash', t.ref, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('mode', t.short, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull()),
        )
        .execute();
      await s
        .createIndex('mailroom_project_secrets_project')
        .on('mailroom_project_secrets')
        .column('project_id')
        .execute();

      await dialect
        .tableOptions(
          s
            .createTable('mailroom_senders')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('address', t.address, (c) => c.notNull())
            .addColumn('name', t.text)
            .addColumn('dkim', t.json)
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addUniqueConstraint('mailroom_senders_project_address', ['project_id', 'address']),
        )
        .execute();

      await dialect
        .tableOptions(
          s
            .createTable('mailroom_templates')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('ref', t.ref, (c) => c.notNull())
            .addColumn('format', t.short, (c) => c.notNull())
            .addColumn('subject', t.text)
            .addColumn('source', t.text, (c) => c.notNull())
            .addColumn('compiled', t.text, (c) => c.notNull())
            .addColumn('version', t.int, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addColumn('updated_at', t.big, (c) => c.notNull())
            .addUniqueConstraint('mailroom_templates_project_ref', ['project_id', 'ref']),
        )
        .execute();

      await dialect
        .tableOptions(
          s
            .createTable('mailroom_groups')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('ref', t.ref, (c) => c.notNull())
            .addColumn('name', t.text)
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addUniqueConstraint('mailroom_groups_project_ref', ['project_id', 'ref']),
        )
        .execute();

      await dialect
        .tableOptions(
          s
            .createTable('mailroom_group_members')
            .addColumn('group_id', t.id, (c) => c.notNull())
            .addColumn('address', t.address, (c) => c.notNull())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addPrimaryKeyConstraint('mailroom_group_members_pk', ['group_id', 'address']),
        )
        .execute();

      await dialect
        .tableOptions(
          s
            .createTable('mailroom_profiles')
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('address', t.address, (c) => c.notNull())
            .addColumn('name', t.text)
            .addColumn('traits', t.json, (c) => c.notNull())
            .addColumn('status', t.short, (c) => c.notNull())
            .addColumn('labels', t.json, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addColumn('updated_at', t.big, (c) => c.notNull())
            .addPrimaryKeyConstraint('mailroom_profiles_pk', ['project_id', 'address']),
        )
        .execute();

      await dialect
        .tableOptions(
          s
            .createTable('mailroom_suppressions')
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('address', t.address, (c) => c.notNull())
            .addColumn('reason', t.short, (c) => c.notNull())
            .addColumn('detail', t.text)
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addPrimaryKeyConstraint('mailroom_suppressions_pk', ['project_id', 'address']),
        )
        .execute();

      await dialect
        .tableOptions(
          s
            .createTable('mailroom_mailings')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('kind', t.short, (c) => c.notNull())
            .addColumn('ref', t.ref, (c) => c.notNull())
            .addColumn('status', t.short, (c) => c.notNull())
            .addColumn('sender', t.json, (c) => c.notNull())
            .addColumn('reply_to', t.text)
            .addColumn('content', t.json, (c) => c.notNull())
            .addColumn('attachments', t.json, (c) => c.notNull())
            .addColumn('invitation', t.json)
            .addColumn('acquiring_audience', t.text)
            .addColumn('schedule_for', t.big)
            .addColumn('store_content', t.int, (c) => c.notNull())
            .addColumn('sandbox', t.int, (c) => c.notNull())
            .addColumn('batch_count', t.int, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addColumn('updated_at', t.big, (c) => c.notNull())
            .addUniqueConstraint('mailroom_mailings_project_ref', ['project_id', 'ref']),
        )
        .execute();
      await s
        .createIndex('mailroom_mailings_listing')
        .on('mailroom_mailings')
        .columns(['project_id', 'kind', 'created_at', 'id'])
        .execute();

      await dialect
        .tableOptions(
          s
            .createTable('mailroom_batches')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('mailing_id', t.id, (c) => c.notNull())
            .addColumn('seq', t.int, (c) => c.notNull())
            .addColumn('recipient_count', t.int, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull()),
        )
        .execute();
      await s.createIndex('mailroom_batches_mailing').on('mailroom_batches').column('mailing_id').execute();

      let deliveries = s
        .createTable('mailroom_deliveries')
        .addColumn('id', t.id, (c) => c.primaryKey())
        .addColumn('project_id', t.id, (c) => c.notNull())
        .addColumn('mailing_id', t.id, (c) => c.notNull())
        .addColumn('batch_id', t.id, (c) => c.notNull())
        .addColumn('address', t.address, (c) => c.notNull())
        .addColumn('name', t.text, (c) => c.notNull())
        .addColumn('variables', t.json, (c) => c.notNull())
        .addColumn('traits', t.json, (c) => c.notNull())
        .addColumn('status', t.short, (c) => c.notNull())
        .addColumn('attempts', t.int, (c) => c.notNull())
        .addColumn('next_attempt_at', t.big, (c) => c.notNull())
        .addColumn('lease_expires_at', t.big)
        .addColumn('lease_token', t.big, (c) => c.notNull())
        .addColumn('message_id', t.text, (c) => c.notNull())
        .addColumn('last_response', t.text)
        .addColumn('last_error', t.text)
        .addColumn('sent_at', t.big)
        .addColumn('content', t.json)
        .addColumn('created_at', t.big, (c) => c.notNull())
        .addColumn('updated_at', t.big, (c) => c.notNull())
        .addUniqueConstraint('mailroom_deliveries_mailing_address', ['mailing_id', 'address']);
      if (dialect.openAtColumn) {
        // MySQL has no partial indexes: a stored column that is the attempt time of open rows only
        // (NULL once terminal) gives the claim an index to walk in due order.
        deliveries = deliveries.addColumn('open_at', t.big, (c) =>
          c
            .generatedAlwaysAs(sql`case when status in ('queued', 'sending') then next_attempt_at end`)
            .stored(),
        );
      }
      await dialect.tableOptions(deliveries).execute();
      await s
        .createIndex('mailroom_deliveries_mailing_status')
        .on('mailroom_deliveries')
        .columns(['mailing_id', 'status'])
        .execute();
      if (dialect.openAtColumn) {
        await s.createIndex('mailroom_deliveries_due').on('mailroom_deliveries').column('open_at').execute();
      } else {
        // Only open deliveries are indexed: the claim walks them in due order and stops at its limit,
        // however many terminal deliveries the table holds.
        await s
          .createIndex('mailroom_deliveries_due')
          .on('mailroom_deliveries')
          .column('next_attempt_at')
          .where(sql.ref('status'), 'in', sql`('queued', 'sending')`)
          .execute();
      }

      await dialect
        .tableOptions(
          s
            .createTable('mailroom_source_jobs')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('mailing_id', t.id, (c) => c.notNull())
            .addColumn('batch_id', t.id, (c) => c.notNull())
            .addColumn('kind', t.short, (c) => c.notNull())
            .addColumn('config', t.json, (c) => c.notNull())
            .addColumn('status', t.short, (c) => c.notNull())
            .addColumn('checkpoint', t.json)
            .addColumn('rows_done', t.big, (c) => c.notNull())
            .addColumn('rows_failed', t.big, (c) => c.notNull())
            .addColumn('row_errors', t.json, (c) => c.notNull())
            .addColumn('error', t.text)
            .addColumn('lease_expires_at', t.big)
            .addColumn('lease_token', t.big, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addColumn('updated_at', t.big, (c) => c.notNull()),
        )
        .execute();
      await s
        .createIndex('mailroom_source_jobs_mailing')
        .on('mailroom_source_jobs')
        .columns(['mailing_id', 'status'])
        .execute();
      await s
        .createIndex('mailroom_source_jobs_status')
        .on('mailroom_source_jobs')
        .columns(['status', 'created_at'])
        .execute();

      await dialect
        .tableOptions(
          s
            .createTable('mailroom_idempotency')
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('idem_key', t.ref, (c) => c.notNull())
            .addColumn('request_hash', t.ref, (c) => c.notNull())
            .addColumn('state', t.short, (c) => c.notNull())
            .addColumn('response', t.json)
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addColumn('expires_at', t.big, (c) => c.notNull())
            .addPrimaryKeyConstraint('mailroom_idempotency_pk', ['project_id', 'idem_key']),
        )
        .execute();
    },
  };
}

/**
 * 002: installation settings (the unsubscribe secret lives there, so every node signs alike), idempotency
 * keys of up to 256 characters on MySQL, and indexes for the retention sweeps.
 */
function settingsAndRetention(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_settings')
            .addColumn('name', t.ref, (c) => c.primaryKey())
            .addColumn('value', t.text, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull()),
        )
        .execute();
      if (dialect.boundedKeys) {
        // Keys of 1 to 256 characters are accepted; varchar(255) would refuse the longest.
        await sql`alter table mailroom_idempotency modify idem_key varchar(256) not null`.execute(db);
      }
      await s
        .createIndex('mailroom_idempotency_expiry')
        .on('mailroom_idempotency')
        .column('expires_at')
        .execute();
      // Only deliveries that keep content are indexed (MySQL, without partial indexes, scans instead:
      // an index on every outcome's updated_at would tax the hot path for a daily sweep).
      if (!dialect.openAtColumn) {
        await s
          .createIndex('mailroom_deliveries_content')
          .on('mailroom_deliveries')
          .column('updated_at')
          .where(sql.ref('content'), 'is not', null)
          .execute();
      }
    },
  };
}

/** The store's migrations for `kind`, in order. Names sort in application order. */
export function mailroomMigrations(kind: SqlKind): Record<string, Migration> {
  const dialect = dialectOf(kind);
  return {
    '001_initial': initialSchema(dialect),
    '002_settings_retention': settingsAndRetention(dialect),
    '003_events_webhooks': eventsAndWebhooks(dialect),
    '004_inbound_signals': inboundSignalsMigration(dialect),
    '005_tracking': trackingSchema(dialect),
    '006_webhook_priority': webhookPriority(dialect),
    '007_domains': domainsSchema(dialect),
    '008_signal_reasons': signalReasons(dialect),
    '009_webhook_circuit': webhookCircuit(dialect.columnTypes),
    '010_api_keys': apiKeys(dialect.columnTypes),
    '013_pauses': pausesSchema(dialect),
    '014_destination_limits': destinationLimitsSchema(dialect),
    '017_event_series': eventSeries(),
    '018_key_names': keyNames(dialect.columnTypes),
    '019_delivery_priority': deliveryPriority(dialect),
    '020_topics_consent': topicsConsentSchema(dialect),
    '021_suppression_case': suppressionCase(),
    '022_preferences': preferencesSchema(dialect),
    '023_signup_forms': signupFormsSchema(dialect),
    '024_automations': automationsSchema(dialect),
    '025_receiving': receivingSchema(dialect),
    '027_delivery_open_index': deliveryOpenIndex(dialect),
    '028_open_broadcasts': openBroadcasts(),
    '029_received_mail': receivedMailSchema(dialect),
    '030_unsubscribed_folded': unsubscribedFolded(kind),
    '032_step_counts': stepCountsSchema(dialect),
    '034_hot_claims': hotClaims(dialect),
  };
}

/** A Kysely migration provider serving {@link mailroomMigrations} from code (nothing is read from disk). */
export function mailroomMigrationProvider(kind: SqlKind): MigrationProvider {
  return { getMigrations: async () => mailroomMigrations(kind) };
}

/**
 * Apply every pending migration. Safe when several processes do it at once: on PostgreSQL the whole run
 * is one transaction holding an advisory lock until its commit (also behind a transaction pooler); Kysely's
 * migrator takes `GET_LOCK` on MySQL; on SQLite the whole run is one `BEGIN IMMEDIATE`
 * transaction, so the second process waits for the first and then finds nothing to do. A run that loses
 * a race anyway (a busy file, two `CREATE TABLE IF NOT EXISTS` of the migration table) is run again.
 */
export async function runMigrations(db: Db, dialect: SqlDialect): Promise<void> {
  if (await isCurrent(db, dialect.kind)) return;
  for (let attempt = 1; ; attempt++) {
    try {
      await dialect.runMigrator(db, (on, schema, inTransaction) =>
        migrateWith(on, dialect.kind, schema, inTransaction ?? false),
      );
      return;
    } catch (error) {
      if (attempt >= MIGRATE_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25 * attempt + Math.random() * 50));
    }
  }
}

/**
 * Whether the database has exactly this version's migrations applied, read in one statement. Kysely's
 * migrator finds that out too, but first looks for its tables by listing every column of every table in
 * the database (twice, on PostgreSQL with a `pg_get_serial_sequence` per column, in all schemas): that cost
 * each process start, and each store a test opens, tens of milliseconds of the server's CPU. Anything
 * else (no migration table yet, a migration pending, a name this version does not know, an error) goes
 * the migrator's way, with its locks, as before. No lock is needed to read: the names are written in the
 * transaction of their migrations (PostgreSQL, SQLite) or after each has run (MySQL), so a complete list
 * means a migrated database. PostgreSQL: only the table of the connection's own schema counts (the
 * migrator's table, see `runMigrator`), not one that the search path finds further on.
 */
async function isCurrent(db: Db, kind: SqlKind): Promise<boolean> {
  const query =
    kind === 'postgres'
      ? sql<{
          name: string;
        }>`select name from mailroom_migrations where tableoid = to_regclass(quote_ident(current_schema()) || '.mailroom_migrations')`
      : sql<{ name: string }>`select name from mailroom_migrations`;
  try {
    const applied = new Set((await query.execute(db)).rows.map((row) => row.name));
    const known = Object.keys(mailroomMigrations(kind));
    return applied.size === known.length && known.every((name) => applied.has(name));
  } catch {
    return false;
  }
}

async function migrateWith(
  db: Db,
  kind: SqlKind,
  schema: string | undefined,
  inTransaction: boolean,
): Promise<void> {
  const migrator = new Migrator({
    db,
    ...(inTransaction ? { disableTransactions: true } : {}),
    provider: mailroomMigrationProvider(kind),
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}
