import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 006: webhook messages get a claim priority (`WebhookMessageRecord.priority`: 0, single messages and
 * everything else, before 1, a broadcast's deliveries), and the due index leads with it, so that a claim
 * of one priority is one index range on every database. Messages written before have priority 0.
 */
export function webhookPriority(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await s
        .alterTable('mailroom_webhook_messages')
        .addColumn('priority', t.int, (c) => c.notNull().defaultTo(0))
        .execute();
      await dialect.dropIndex(s, 'mailroom_webhook_messages_due', 'mailroom_webhook_messages').execute();
      const due = s.createIndex('mailroom_webhook_messages_due').on('mailroom_webhook_messages');
      if (dialect.openAtColumn) {
        // No partial indexes: `open_at` (migration 003) is null for settled messages.
        await due.columns(['priority', 'open_at']).execute();
      } else {
        await due
          .columns(['priority', 'next_attempt_at'])
          .where(sql.ref('status'), 'in', sql`('pending', 'sending')`)
          .execute();
      }
    },
  };
}
