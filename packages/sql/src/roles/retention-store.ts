import type { RetentionStore } from '@mailroom/core';
import type { SqlContext } from '../sql-context.js';

/** `RetentionStore` on SQL. The retention sweeps, a chunk at a time. */
export function sqlRetentionStore(ctx: SqlContext): RetentionStore {
  const { dialect, guard, write } = ctx;

  return {
    pruneIdempotent(now, limit) {
      return guard('pruneIdempotent', async () => {
        if (limit <= 0) return 0;
        const table = 'mailroom_idempotency';
        return write(
          `DELETE FROM ${table} ${dialect.limitedWhere(table, ['project_id', 'idem_key'], 'expires_at <= ?')}`,
          [now.getTime(), limit],
        );
      });
    },

    pruneDeliveryContent(before, limit) {
      return guard('pruneDeliveryContent', async () => {
        if (limit <= 0) return 0;
        const table = 'mailroom_deliveries';
        // PostgreSQL indexes the content kept by `created_at` (migration 034: a claim changes
        // `updated_at`, and an index on it would make the claim write index entries), which is never
        // after `updated_at`: its bound picks the rows from the index, `updated_at` decides.
        const where = dialect.partialOpenAt
          ? 'content IS NOT NULL AND created_at < ? AND updated_at < ?'
          : 'content IS NOT NULL AND updated_at < ?';
        const cutoff = before.getTime();
        return write(`UPDATE ${table} SET content = NULL ${dialect.limitedWhere(table, ['id'], where)}`, [
          ...(dialect.partialOpenAt ? [cutoff, cutoff] : [cutoff]),
          limit,
        ]);
      });
    },

    pruneEvents(before, limit) {
      return guard('pruneEvents', async () => {
        if (limit <= 0) return 0;
        const cutoff = before.getTime();
        // No index on the times, on purpose (these tables are written with every delivery outcome): the
        // scan meets the oldest rows first, as they were inserted first, and stops at the limit.
        const chunk = (table: string, where: string) =>
          write(`DELETE FROM ${table} ${dialect.limitedWhere(table, ['id'], where)}`, [cutoff, limit]);
        const attempts = await chunk('mailroom_webhook_attempts', 'created_at < ?');
        const messages = await chunk(
          'mailroom_webhook_messages',
          "status IN ('delivered', 'failed') AND updated_at < ?",
        );
        const events = await chunk('mailroom_events', 'created_at < ?');
        return attempts + messages + events;
      });
    },
  };
}
