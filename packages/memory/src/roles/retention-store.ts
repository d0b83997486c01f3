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
    async pruneEvents(before, limit) {
      if (limit <= 0) return 0;
      const { outbox } = db();
      const cutoff = before.getTime();
      const attempts = outbox.attempts;
      let removed = 0;
      const kept = attempts.filter((a) => {
        if (removed >= limit || a.createdAt.getTime() >= cutoff) return true;
        removed += 1;
        return false;
      });
      if (kept.length !== attempts.length) outbox.attempts = kept;
      let messages = 0;
      for (const [id, m] of outbox.messages) {
        if (messages >= limit) break;
        if (m.status !== 'delivered' && m.status !== 'failed') continue;
        if (m.updatedAt.getTime() >= cutoff) continue;
        outbox.messages.delete(id);
        outbox.openMessages.delete(m);
        messages += 1;
      }
      let events = 0;
      for (const [id, e] of outbox.events) {
        if (events >= limit) break;
        if (e.createdAt.getTime() >= cutoff) continue;
        outbox.events.delete(id);
        events += 1;
      }
      return removed + messages + events;
    },
  };
}
