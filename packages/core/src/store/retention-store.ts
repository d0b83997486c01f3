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
   * sets `updatedAt`; a delivery's `createdAt` is never after its `updatedAt`, so a store may also bound the
   * sweep by `createdAt < before` to use an index). Leaves `updatedAt` as it is. Returns how many it cleared; a caller that wants them all
   * calls again until it gets less than `limit`.
   */
  pruneDeliveryContent(before: Date, limit: number): Promise<number>;
  /**
   * Forget old events and webhook traffic, of any project: delete at most `limit` of each of (1) webhook
   * attempts whose `createdAt` is before `before`, (2) webhook messages that are `delivered` or `failed`
   * and whose `updatedAt` is before `before` (a `pending` or `sending` message is never deleted, however
   * old: it has not reached its endpoint yet) and (3) events whose `createdAt` is before `before`. Returns
   * the sum; a caller that wants them all calls again until it gets less than `limit` (then each kind
   * had less than `limit` left).
   */
  pruneEvents(before: Date, limit: number): Promise<number>;
}
