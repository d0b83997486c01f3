/**
 * The sweeps that keep a store from growing without bound, each a chunk at a time so that no call holds
 * locks for long. Every rule of `Store` (store.ts) applies.
 */
export interface RetentionStore {
  /**
   * Delete at most `limit` idempotency records, of any project, whose `expiresAt <= now`; returns how many.
   * A caller that wants them all calls again until it gets less than `limit`.
   */
  pruneIdempotent(now: Date, limit: number): Promise<number>;
  /**
   * Forget kept rendered content: set `content` to null on at most `limit` deliveries, of any project, whose
   * `content` is not null and whose `updatedAt` is before `before` (content is written with an outcome, which
   * sets `updatedAt`). Leaves `updatedAt` as it is. Returns how many it cleared; a caller that wants them all
   * calls again until it gets less than `limit`.
   */
  pruneDeliveryContent(before: Date, limit: number): Promise<number>;
}
