/** Retention of rendered content kept by `storeContent`. */
export interface RetentionOptions {
  /**
   * Kept content older than this many days is cleared by the running worker's sweep (and by
   * `pruneContent()` without arguments). @default undefined (kept until pruned explicitly)
   */
  contentDays?: number;
  /**
   * Events (`listEvents`, `GET /events`) and the webhook messages and attempts that carried them, older
   * than this many days, are deleted by the running worker's sweep; a webhook message not yet delivered
   * or failed is kept however old. `Infinity` keeps them all. Longer than the webhook retry schedule (about
   * 28 hours) and the 5 days after which a failing endpoint is disabled, so that what the dashboard shows
   * of a failing endpoint is still there. @default 30
   */
  eventDays?: number;
  /**
   * How often a running worker sweeps: kept content past `contentDays`, events past `eventDays`,
   * expired idempotency keys and received mail past its retention (`receiving.retentionDays`).
   * @default 3_600_000 (one hour)
   */
  sweepEveryMs?: number;
}
