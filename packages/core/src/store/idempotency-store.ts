import type { IdempotencyRecord } from './records.js';

/**
 * Idempotency keys: a request sent again under the same key gets the first one's response instead of
 * being accepted twice. Expired keys are deleted by the `RetentionStore`. Every rule of `Store`
 * (store.ts) applies.
 */
export interface IdempotencyStore {
  /**
   * Begin a request under an idempotency key. Atomically: if no live record exists for (projectId, key)
   * (none, or `expiresAt <= now`), insert `record` (state `running`) and return `{ created: true }`;
   * otherwise return the existing record. Of concurrent calls with one key, exactly one gets `created`.
   */
  beginIdempotent(
    record: IdempotencyRecord,
    now: Date,
  ): Promise<{ created: true } | { created: false; existing: IdempotencyRecord }>;
  /** Store the response of a key's request and mark it `done`. */
  finishIdempotent(projectId: string, key: string, response: IdempotencyRecord['response']): Promise<void>;
  /** Forget a key (its request failed validation or crashed before committing). */
  dropIdempotent(projectId: string, key: string): Promise<void>;
}
