/**
 * One limit of a key: at most `limit` tokens in any window of `windowMs` (see {@link tokenWindowSpan} for
 * how the window is counted).
 */
export interface TokenWindow {
  /** The window's length in milliseconds (1000 for a per-second limit, 86,400,000 for a per-day one). */
  readonly windowMs: number;
  /** Tokens allowed in one window; 0 allows none. */
  readonly limit: number;
}

/** What {@link DestinationLimitStore.takeTokens} is asked for. */
export interface TokenRequest {
  /**
   * What the tokens are counted for, shared by every worker on the store: `dest:<destination>` for the
   * limits of a destination group (`dest:google`, `dest:example.com`). Other gates use keys of their own
   * (a sender domain's warm-up allowance, for example), so one primitive serves them all.
   */
  readonly key: string;
  /** Tokens wanted, at least 1: usually the deliveries to that key waiting in this worker now. */
  readonly count: number;
  /** Every limit of the key; a token is granted only within all of them. */
  readonly windows: readonly TokenWindow[];
  /** The current time; the windows are counted back from it. */
  readonly now: Date;
}

/** What {@link DestinationLimitStore.takeTokens} granted. */
export interface TokenGrant {
  /** Tokens taken, from 0 to the count asked: the first `granted` of the caller's waiting sends may go. */
  readonly granted: number;
  /**
   * When fewer were granted than asked: the earliest time at which the window that refused may hold one
   * more token (a bucket leaves it). Asking again before then is refused again.
   */
  readonly retryAt?: Date;
}

/**
 * Shared send limits: tokens counted per key in time windows, so that several workers (processes
 * included) together keep to one limit per destination. Every rule of `Store` (store.ts) applies.
 * The counting rule is the core's ({@link tokenWindowSpan}, {@link tokenRetryAt}): adapters store the
 * buckets and take them atomically.
 */
export interface DestinationLimitStore {
  /**
   * Take up to `count` tokens for `key`: as many as every window of `windows` still holds, counted by
   * {@link tokenWindowSpan} at `now` (the tokens taken are added to the current bucket of each window).
   * Answers how many were taken and, when fewer than asked, the `retryAt` of {@link tokenRetryAt} for the
   * window that refused. Buckets older than any window's span may be deleted.
   *
   * Race guarantee: the check and the take are one atomic step per key. Of concurrent callers on one
   * key, in one process or many (when `capabilities.multiProcess`), the tokens granted in all never
   * exceed any window's limit: the SQL store serializes callers of a key on a row lock (PostgreSQL,
   * MySQL) or the write lock (SQLite); the memory store within one synchronous run.
   */
  takeTokens(request: TokenRequest): Promise<TokenGrant>;
}

/** Where a window's tokens are counted at a time: its bucket size, the current bucket and the oldest one counted. */
export interface TokenWindowSpan {
  /** Bucket length: a tenth of the window, at least 250 ms where the window is a second or more long. */
  readonly bucketMs: number;
  /** Start (epoch ms) of the bucket `now` falls in: tokens taken now are added there. */
  readonly bucket: number;
  /** Buckets starting at or after this (epoch ms) count against the limit. */
  readonly since: number;
}

/**
 * How a window is counted: tokens go into buckets of `bucketMs`, and a take at `t` counts every bucket
 * starting at or after `bucket - windowMs - bucketMs` (where `bucket` is `t` rounded down to a bucket).
 * The span counted is between `windowMs + bucketMs` and `windowMs + 2 × bucketMs` long, so no interval
 * of `windowMs + bucketMs` holds more than `limit` grants. The extra `bucketMs` is the margin for the time
 * between a grant and the message's arrival at the receiving server: as long as that is under
 * `bucketMs` (250 ms for a per-second limit, 6 s for a per-minute one), no window of `windowMs` at the
 * receiver sees more than `limit` messages. The price is throughput: a binding limit runs at `limit` per
 * `windowMs + 1 to 2 buckets` (about 1.25 to 1.5 s for a per-second limit, 66 to 72 s per minute).
 */
export function tokenWindowSpan(windowMs: number, now: Date): TokenWindowSpan {
  const bucketMs = Math.max(1, Math.floor(windowMs / 10), Math.min(Math.floor(windowMs / 4), 250));
  const t = now.getTime();
  const bucket = t - (((t % bucketMs) + bucketMs) % bucketMs);
  return { bucketMs, bucket, since: bucket - windowMs - bucketMs };
}

/**
 * When a window that holds `used` tokens (in `buckets`, the counted buckets of {@link tokenWindowSpan},
 * any order) may grant one more: the time the oldest buckets that must leave have left it. A bucket
 * starting at `s` stops counting once the current bucket starts after `s + windowMs + bucketMs`.
 */
export function tokenRetryAt(
  buckets: ReadonlyArray<{ start: number; tokens: number }>,
  window: TokenWindow,
  now: Date,
): Date {
  const { bucketMs } = tokenWindowSpan(window.windowMs, now);
  const sorted = [...buckets].sort((a, b) => a.start - b.start);
  let used = sorted.reduce((sum, b) => sum + b.tokens, 0);
  for (const b of sorted) {
    used -= b.tokens;
    if (used < window.limit) {
      // The first bucket start at which `b` no longer counts: since > b.start.
      const leaves = b.start + window.windowMs + bucketMs + 1;
      const at = leaves + ((bucketMs - (leaves % bucketMs)) % bucketMs);
      return new Date(Math.max(at, now.getTime() + 1));
    }
  }
  // A limit of 0 (or fewer tokens than asked ever fit): ask again after a whole window.
  return new Date(now.getTime() + window.windowMs);
}

/** One stored bucket of a key: the tokens taken in the bucket of `windowMs` starting at `start`. */
export interface TokenBucket {
  readonly windowMs: number;
  readonly start: number;
  readonly tokens: number;
}

/** What a store writes for one {@link TokenRequest}: the grant, and the buckets to add it to. */
export interface TokenDecision extends TokenGrant {
  /** Add `granted` tokens to each of these buckets (none when nothing was granted). */
  readonly buckets: ReadonlyArray<{ windowMs: number; start: number }>;
  /**
   * Per window of the request, the start (epoch ms) of its oldest counted bucket: the key's buckets of
   * that window starting before it count no more, and a store may delete them (and need not read them).
   */
  readonly counted: ReadonlyArray<{ windowMs: number; since: number }>;
}

/**
 * The decision of {@link DestinationLimitStore.takeTokens}, for a store to apply atomically: from the
 * buckets the key holds (at least every bucket counted by {@link tokenWindowSpan} for each window; more
 * are ignored), how many of `request.count` tokens fit in every window, and where they go. Written once
 * here so that every adapter counts alike.
 */
export function decideTokens(request: TokenRequest, stored: readonly TokenBucket[]): TokenDecision {
  let granted = Math.max(0, Math.floor(request.count));
  const buckets: Array<{ windowMs: number; start: number }> = [];
  const spans = request.windows.map((window) => {
    const span = tokenWindowSpan(window.windowMs, request.now);
    const counted = stored.filter((b) => b.windowMs === window.windowMs && b.start >= span.since);
    const used = counted.reduce((sum, b) => sum + b.tokens, 0);
    granted = Math.min(granted, Math.max(0, window.limit - used));
    buckets.push({ windowMs: window.windowMs, start: span.bucket });
    return { window, span, counted, used };
  });
  let retryAt: Date | undefined;
  if (granted < request.count) {
    // When one more token fits, after this grant: the latest of the full windows' answers.
    for (const { window, span, counted, used } of spans) {
      if (used + granted < window.limit) continue;
      const after = [...counted, { start: span.bucket, tokens: granted }];
      const at = tokenRetryAt(after, window, request.now);
      if (!retryAt || at > retryAt) retryAt = at;
    }
  }
  return {
    granted,
    ...(granted < request.count && retryAt ? { retryAt } : {}),
    buckets: granted > 0 ? buckets : [],
    counted: spans.map(({ window, span }) => ({ windowMs: window.windowMs, since: span.since })),
  };
}
