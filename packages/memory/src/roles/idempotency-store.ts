import type { IdempotencyStore } from '@mailroom/core';
import { clone } from '../memory-copy.js';
import type { State } from '../memory-state.js';
import { key } from '../memory-state.js';

/** `IdempotencyStore` in memory. Idempotency keys; every method checks and writes within one synchronous run. */
export function memoryIdempotencyStore(db: () => State): IdempotencyStore {
  return {
    async beginIdempotent(record, now) {
      const s = db();
      const k = key(record.projectId, record.key);
      const existing = s.idempotency.get(k);
      if (existing && existing.expiresAt.getTime() > now.getTime())
        return { created: false, existing: clone(existing) };
      s.idempotency.set(k, clone(record));
      return { created: true };
    },
    async finishIdempotent(projectId, key_, response) {
      const record = db().idempotency.get(key(projectId, key_));
      if (!record) return;
      record.state = 'done';
      record.response = clone(response);
    },
    async dropIdempotent(projectId, key_) {
      db().idempotency.delete(key(projectId, key_));
    },
  };
}
