import type { Kysely, Migration } from 'kysely';
import { sql } from 'kysely';
import type { SqlDialect } from '../dialects/sql-dialect.js';

/**
 * 018: deliveries get a claim priority (`DeliveryRecord.priority`: 0, a single message's, before 1, a
 * broadcast's), and the due index leads with it, so that a claim of one priority is one index range on
 * every database, as for webhook messages (migration 006). Deliveries written before have priority 1.
 */
export function deliveryPriority(dialect: SqlDialect): Migration {
  const t = dialect.columnTypes;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const s = db.schema;
      await s
        .alterTable('mailroom_deliveries')
        .addColumn('priority', t.int, (c) => c.notNull().defaultTo(1))
        .execute();
      await dialect.dropIndex(s, 'mailroom_deliveries_due', 'mailroom_deliveries').execute();
      const due = s.createIndex('mailroom_deliveries_due').on('mailroom_deliveries');
      if (dialect.openAtColumn) {
        // No partial indexes: `open_at` (migration 001) is null for settled deliveries.
        await due.columns(['priority', 'open_at']).execute();
      } else {
        await due
          .columns(['priority', 'next_attempt_at'])
          .where(sql.ref('status'), 'in', sql`('queued', 'sending')`)
          .execute();
      }
    },
  };
}
