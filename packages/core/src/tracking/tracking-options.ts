/** Options of open and click tracking. */
export interface TrackingOptions {
  /**
   * Where the HTTP adapter is reachable from the recipients' mail clients, mount point included: links
   * become `<baseUrl>/t/c/<token>` and the pixel `<baseUrl>/t/o/<token>.gif`. A function is read once per
   * mailing and worker.
   */
  baseUrl: string | (() => string);
  /** Add a 1x1 pixel at the end of each HTML body; its first load is an `email.opened`. @default false */
  opens?: boolean;
  /** Rewrite each http(s) link of the HTML part to pass through `/t/c/`. @default false */
  clicks?: boolean;
  /**
   * The HMAC key of the tokens (at least 16 characters). Every process that sends or serves tracking links
   * needs the same one.
   * @default a random secret generated once and kept in the store (`Store.ensureSetting`)
   */
  secret?: string;
  /**
   * Clicks that arrive this soon after the message was sent and, together, cover every link of it are a
   * link scanner's (`machine: true`). Such early clicks are held that long before they are recorded.
   * @default 10_000
   */
  scannerWindowMs?: number;
  /** Longest a hit waits in this process before it is written, in a batch. @default 250 */
  flushMs?: number;
}
/** A mailing's open and click figures, people and machines apart. */
export interface TrackingView {
  /** Deliveries opened at least once, by class (one opened by both counts in both). */
  opens: { human: number; machine: number };
  /** Deliveries with at least one click, by class. */
  clicks: { human: number; machine: number };
  /** Every click, by class. */
  clickTotals: { human: number; machine: number };
  /** Links by the deliveries that clicked them, people first: most clicked first, at most `limit`. */
  topLinks: Array<{ index: number; url: string; human: number; machine: number }>;
}
/** What the HTTP layer tells about a tracking hit, used only to judge person or machine. */
export interface TrackingHitMeta {
  /** The `User-Agent` header. */
  userAgent?: string | undefined;
  /** The client address as the server saw it. */
  ip?: string | undefined;
  /** `GET` or `HEAD` (link scanners often check with `HEAD`). */
  method?: string | undefined;
}
