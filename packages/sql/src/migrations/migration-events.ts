import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 003: the event outbox and the webhook queue (`EventStore` in `@mailroom/core`). Indexes are few on
 * purpose: events and webhook messages are inserted with every delivery outcome, on the hot path.
 */
export function eventsAndWebhooks(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await dialect
        .tableOptions(
          s
            .createTable('mailroom_events')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('type', t.short, (c) => c.notNull())
            .addColumn('mailing_ref', t.ref)
            .addColumn('delivery_id', t.id)
            .addColumn('address', t.address)
            .addColumn('data', t.json, (c) => c.notNull())
            .addColumn('created_at', t.big, (c) => c.notNull()),
        )
        .execute();
      await s
        .createIndex('mailroom_events_project')
        .on('mailroom_events')
        .columns(['project_id', 'id'])
        .execute();
      await s.createIndex('mailroom_events_delivery').on('mailroom_events').column('delivery_id').execute();

      await dialect
        .tableOptions(
          s
            .createTable('mailroom_webhook_endpoints')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('url', t.text, (c) => c.notNull())
            .addColumn('events', t.json)
            .addColumn('secret', t.text, (c) => c.notNull())
            .addColumn('enabled', t.int, (c) => c.notNull())
            .addColumn('disabled_reason', t.text)
            .addColumn('failing_since', t.big)
            .addColumn('created_at', t.big, (c) => c.notNull())
            .addColumn('updated_at', t.big, (c) => c.notNull()),
        )
        .execute();
      await s
        .createIndex('mailroom_webhook_endpoints_project')
        .on('mailroom_webhook_endpoints')
        .column('project_id')
        .execute();

      let messages = s
        .createTable('mailroom_webhook_messages')
        .addColumn('id', t.id, (c) => c.primaryKey())
        .addColumn('project_id', t.id, (c) => c.notNull())
        .addColumn('endpoint_id', t.id, (c) => c.notNull())
        .addColumn('event_id', t.id, (c) => c.notNull())
        .addColumn('event_type', t.short, (c) => c.notNull())
        .addColumn('payload', t.text, (c) => c.notNull())
        .addColumn('status', t.short, (c) => c.notNull())
        .addColumn('attempts', t.int, (c) => c.notNull())
        .addColumn('next_attempt_at', t.big, (c) => c.notNull())
        .addColumn('lease_expires_at', t.big)
        .addColumn('lease_token', t.big, (c) => c.notNull())
        .addColumn('last_status_code', t.int)
        .addColumn('last_error', t.text)
        .addColumn('created_at', t.big, (c) => c.notNull())
        .addColumn('updated_at', t.big, (c) => c.notNull());
      if (dialect.openAtColumn) {
        // As for deliveries: no partial indexes, so a stored column holds the attempt time of open rows.
        messages = messages.addColumn('open_at', t.big, (c) =>
          c
            .generatedAlwaysAs(sql`case when status in ('pending', 'sending') then next_attempt_at end`)
            .stored(),
        );
      }
      await dialect.tableOptions(messages).execute();
      if (dialect.openAtColumn) {
        await s
          .createIndex('mailroom_webhook_messages_due')
          .on('mailroom_webhook_messages')
          .column('open_at')
          .execute();
      } else {
        await s
          .createIndex('mailroom_webhook_messages_due')
          .on('mailroom_webhook_messages')
          .column('next_attempt_at')
          .where(sql.ref('status'), 'in', sql`('pending', 'sending')`)
          .execute();
      }
      await s
        .createIndex('mailroom_webhook_messages_project')
        .on('mailroom_webhook_messages')
        .columns(['project_id', 'updated_at'])
        .execute();

      await dialect
        .tableOptions(
          s
            .createTable('mailroom_webhook_attempts')
            .addColumn('id', t.id, (c) => c.primaryKey())
            .addColumn('project_id', t.id, (c) => c.notNull())
            .addColumn('endpoint_id', t.id, (c) => c.notNull())
            .addColumn('message_id', t.id, (c) => c.notNull())
            .addColumn('event_type', t.short, (c) => c.notNull())
            .addColumn('attempt', t.int, (c) => c.notNull())
            .addColumn('status_code', t.int)
            .addColumn('latency_ms', t.int, (c) => c.notNull())
            .addColumn('error', t.text)
            .addColumn('created_at', t.big, (c) => c.notNull()),
        )
        .execute();
      await s
        .createIndex('mailroom_webhook_attempts_project')
        .on('mailroom_webhook_attempts')
        .columns(['project_id', 'created_at'])
        .execute();
      await s
        .createIndex('mailroom_webhook_attempts_message')
        .on('mailroom_webhook_attempts')
        .column('message_id')
        .execute();
    },
  };
}
