import type { RetentionStore } from '@mailroom/core';
import type { SqlContext } from '../sql-context.js';

/** `RetentionStore` on SQL. The retention sweeps, a chunk at a time. */
export function sqlRetentionStore(ctx: SqlContext): RetentionStore {
  const { mysql, guard, write } = ctx;

  return {
    pruneIdempotent(now, limit) {
      return guard('pruneIdempotent', async () => {
        if (limit <= 0) return 0;
        // MySQL refuses LIMIT in an IN subquery of the table being changed, but takes it on DELETE itself.
        return write(
          mysql
            ? 'DELETE FROM mailroom_idempotency WHERE expires_at <= ? LIMIT ?'
            : `DELETE FROM mailroom_idempotency WHERE (project_id, idem_key) IN
               (SELECT project_id, idem_key FROM mailroom_idempotency WHERE expires_at <= ? LIMIT ?)`,
          [now.getTime(), limit],
        );
      });
    },

    pruneDeliveryContent(before, limit) {
      return guard('pruneDeliveryContent', async () => {
        if (limit <= 0) return 0;
        return write(
          mysql
            ? 'UPDATE mailroom_deliveries SET content = NULL WHERE content IS NOT NULL AND updated_at < ? LIMIT ?'
            : `UPDATE mailroom_deliveries SET content = NULL WHERE id IN
               (SELECT id FROM mailroom_deliveries WHERE content IS NOT NULL AND updated_at < ? LIMIT ?)`,
          [before.getTime(), limit],
        );
      });
    },

    pruneEvents(before, limit) {
      return guard('pruneEvents', async () => {
        if (limit <= 0) return 0;
        const cutoff = before.getTime();
        // No index on the times, on purpose (these tables are written with every delivery outcome): the
        // scan meets the oldest rows first, as they were inserted first, and stops at the limit.
        const chunk = (table: string, where: string) =>
          write(
            mysql
              ? `DELETE FROM ${table} WHERE ${where} LIMIT ?`
              : `DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE ${where} LIMIT ?)`,
            [cutoff, limit],
          );
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
