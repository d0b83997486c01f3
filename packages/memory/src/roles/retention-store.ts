import type { RetentionStore } from '@mailroom/core';
import type { State } from '../memory-state.js';

/** `RetentionStore` in memory. The retention sweeps; every method checks and writes within one synchronous run. */
export function memoryRetentionStore(db: () => State): RetentionStore {
  return {
    async pruneIdempotent(now, limit) {
      const records = db().idempotency;
      let removed = 0;
      for (const [k, record] of records) {
        if (removed >= limit) break;
        if (record.expiresAt.getTime() > now.getTime()) continue;
        records.delete(k);
        removed += 1;
      }
      return removed;
    },
    async pruneDeliveryContent(before, limit) {
      let cleared = 0;
      for (const d of db().deliveries.values()) {
        if (cleared >= limit) break;
        if (d.content === null || d.updatedAt.getTime() >= before.getTime()) continue;
        d.content = null;
        cleared += 1;
      }
      return cleared;
    },
  };
}
