import type { Logger } from '../base/base-types.js';
import type { KeyStore } from '../store/key-store.js';
import type { ApiKeyRecord } from '../store/records.js';

/** A key's last use is written at most this often: a note for people, never a write per request. */
export const KEY_USE_INTERVAL_MS = 60_000;

/** Keys remembered between notes; past it the memory is dropped (a few extra writes, never unbounded). */
const REMEMBERED_KEYS = 10_000;

/** Notes keys' last use cheaply: see {@link createKeyUse}. */
export interface KeyUse {
  /** Note that `key` (as just read) authenticated at `now`; writes in the background when due. */
  note(key: ApiKeyRecord, now: Date): void;
  /** Waits for the writes under way (before the store closes). */
  settle(): Promise<void>;
}

/**
 * Writes a key's `lastUsedAt` at most once per {@link KEY_USE_INTERVAL_MS} per key and process: skipped when
 * the stored time (read with the key) or this process's last note is recent enough. The write is not awaited
 * by the request; a failure is logged, never answered.
 */
export function createKeyUse(store: Pick<KeyStore, 'touchKey'>, logger: Logger): KeyUse {
  const noted = new Map<string, number>();
  const pending = new Set<Promise<void>>();
  return {
    note(key, now) {
      const t = now.getTime();
      const last = Math.max(key.lastUsedAt?.getTime() ?? 0, noted.get(key.id) ?? 0);
      if (last > 0 && t - last < KEY_USE_INTERVAL_MS) return;
      if (noted.size >= REMEMBERED_KEYS) noted.clear();
      noted.set(key.id, t);
      const write = store.touchKey(key.id, now).then(
        () => {},
        (error: unknown) => logger.warn({ err: error, keyId: key.id }, 'mailroom: noting a key use failed'),
      );
      pending.add(write);
      void write.finally(() => pending.delete(write));
    },
    async settle() {
      await Promise.all([...pending]);
    },
  };
}
