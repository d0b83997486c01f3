import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 008: inbound signals keep the bounce's reason, the mailing and destination domain they are counted by
 * (sender-side refusals per project, broadcast and destination), and what the report named when it
 * differs from the delivery (its recipient, its returned copy's Message-ID). Signals written before get
 * their mailing and domain filled in from their delivery and address, and no reason.
 */
export function signalReasons(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      const table = 'mailroom_inbound_signals';
      // One column per statement: SQLite alters one at a time.
      await s.alterTable(table).addColumn('mailing_id', t.id).execute();
      await s.alterTable(table).addColumn('domain', t.address).execute();
      await s.alterTable(table).addColumn('reason', t.short).execute();
      await s.alterTable(table).addColumn('reported_address', t.address).execute();
      await s.alterTable(table).addColumn('reported_message_id', t.text).execute();
      await sql`update mailroom_inbound_signals set mailing_id = coalesce((select d.mailing_id from mailroom_deliveries d where d.id = mailroom_inbound_signals.delivery_id), '')`.execute(
        db,
      );
      await sql`update mailroom_inbound_signals set domain = ${dialect.domainOf('address')}`.execute(db);
      await s
        .createIndex('mailroom_inbound_signals_project')
        .on(table)
        .columns(['project_id', 'kind', 'created_at'])
        .execute();
      await s
        .createIndex('mailroom_inbound_signals_mailing')
        .on(table)
        .columns(['mailing_id', 'kind'])
        .execute();
    },
  };
}
