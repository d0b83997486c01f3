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
  };
}
