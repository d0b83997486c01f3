/**
 * Per-address allowances of the inbound listener: for each IP address a bucket of `limit` that refills
 * evenly over `windowMs`. Kept in memory, pruned once they are many (an address whose bucket has refilled
 * is back to a full allowance anyway, so forgetting it changes nothing).
 */
export interface RateBuckets {
  /** Takes one from `ip`'s allowance; false (and nothing taken) when it has none left. */
  take(ip: string, now: number): boolean;
  /** Whether `ip` has none left, without taking any. */
  exhausted(ip: string, now: number): boolean;
}

/** One address's allowance: `tokens` left at `at` (ms). */
interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets of `limit` per `windowMs`; at most about `maxAddresses` kept before a prune. */
export function rateBuckets(limit: number, windowMs: number, maxAddresses = 10_000): RateBuckets {
  const buckets = new Map<string, Bucket>();
  const level = (b: Bucket, now: number) => Math.min(limit, b.tokens + ((now - b.at) * limit) / windowMs);
  function refilled(ip: string, now: number): Bucket {
    const bucket = buckets.get(ip) ?? { tokens: limit, at: now };
    bucket.tokens = level(bucket, now);
    bucket.at = now;
    return bucket;
  }
  return {
    take(ip, now) {
      const bucket = refilled(ip, now);
      buckets.set(ip, bucket);
      if (buckets.size > maxAddresses) {
        for (const [key, b] of buckets) if (level(b, now) >= limit) buckets.delete(key);
      }
      if (bucket.tokens < 1) return false;
      bucket.tokens -= 1;
      return true;
    },
    exhausted(ip, now) {
      if (limit < 1) return true;
      const bucket = buckets.get(ip);
      return bucket !== undefined && level(bucket, now) < 1;
    },
  };
}
