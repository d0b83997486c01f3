import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';
import type { SqlKind } from '../connection/options.js';
import type { ColumnTypes } from '../dialects/column-types.js';

/**
 * 008: inbound signals keep the bounce's reason, the mailing and destination domain they are counted by
 * (sender-side refusals per project, broadcast and destination), and what the report named when it
 * differs from the delivery (its recipient, its returned copy's Message-ID). Signals written before get
 * their mailing and domain filled in from their delivery and address, and no reason.
 */
export function signalReasons(kind: SqlKind, t: ColumnTypes): Migration {
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
      const domainOf =
        kind === 'postgres'
          ? sql`lower(split_part(address, '@', 2))`
          : kind === 'mysql'
            ? sql`lower(substring_index(address, '@', -1))`
            : sql`lower(substr(address, instr(address, '@') + 1))`;
      await sql`update mailroom_inbound_signals set domain = ${domainOf}`.execute(db);
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
