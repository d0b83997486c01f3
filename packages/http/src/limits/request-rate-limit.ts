import { MailroomError } from '@mailroom/core';

/** Per-project rate limit (an in-memory token bucket in this process). */
export interface RateLimitOptions {
  /** Sustained requests per second per project. */
  perProjectPerSecond: number;
  /** Requests a project may make at once before the sustained rate applies. @default perProjectPerSecond */
  burst?: number;
}

/** The API's request rate limit: a token bucket per key (the project id). Not the core's send cap. */
export interface RequestRateLimiter {
  /** Take one token for `key`; throws `RATE_LIMITED` with `retryAfter` (seconds) when there is none. */
  take(key: string): void;
}

interface Bucket {
  tokens: number;
  /** Milliseconds (monotonic) of the last refill. */
  at: number;
}

/** Buckets kept before full (idle) ones are dropped, so memory stays bounded by active projects. */
const PRUNE_THRESHOLD = 10_000;

/**
 * An in-memory token bucket per key: `burst` tokens at most, refilled at `perProjectPerSecond`. It is per
 * process, which is what a single embedded server needs; several nodes each enforce their own share.
 */
export function createRequestRateLimiter(
  options: RateLimitOptions,
  now: () => number = () => performance.now(),
): RequestRateLimiter {
  const rate = options.perProjectPerSecond;
  const burst = options.burst ?? rate;
  if (!(Number.isFinite(rate) && rate > 0) || !(Number.isFinite(burst) && burst >= 1)) {
    throw new MailroomError(
      'VALIDATION_FAILED',
      'rateLimit.perProjectPerSecond must be a positive number and rateLimit.burst at least 1',
      { source: '@mailroom/http' },
    );
  }
  const buckets = new Map<string, Bucket>();

  const refill = (bucket: Bucket, t: number): void => {
    bucket.tokens = Math.min(burst, bucket.tokens + ((t - bucket.at) / 1000) * rate);
    bucket.at = t;
  };

  const prune = (t: number): void => {
    for (const [key, bucket] of buckets) {
      refill(bucket, t);
      if (bucket.tokens >= burst) buckets.delete(key);
    }
  };

  return {
    take(key) {
      const t = now();
      let bucket = buckets.get(key);
      if (!bucket) {
        if (buckets.size >= PRUNE_THRESHOLD) prune(t);
        bucket = { tokens: burst, at: t };
        buckets.set(key, bucket);
      } else {
        refill(bucket, t);
      }
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return;
      }
      const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / rate));
      throw new MailroomError('RATE_LIMITED', 'Too many requests for this project; retry later', {
        retryAfter,
      });
    },
  };
}
