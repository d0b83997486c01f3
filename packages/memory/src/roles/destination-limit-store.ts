import type { DestinationLimitStore, TokenBucket } from '@mailroom/core';
import { decideTokens } from '@mailroom/core';
import type { State } from '../memory-state.js';

/**
 * `DestinationLimitStore` in memory: a key's buckets in a map, read, decided (`decideTokens`) and
 * written within one synchronous run, so concurrent takes in this process never exceed a limit.
 */
export function memoryDestinationLimitStore(db: () => State): DestinationLimitStore {
  return {
    async takeTokens(request) {
      const s = db();
      let buckets = s.tokens.get(request.key);
      if (!buckets) {
        buckets = new Map();
        s.tokens.set(request.key, buckets);
      }
      const stored: TokenBucket[] = [];
      for (const [where, tokens] of buckets) {
        const [windowMs, start] = where.split(':').map(Number) as [number, number];
        stored.push({ windowMs, start, tokens });
      }
      const decision = decideTokens(request, stored);
      const since = new Map(decision.counted.map((c) => [c.windowMs, c.since]));
      for (const b of stored) {
        if (b.start < (since.get(b.windowMs) ?? Number.POSITIVE_INFINITY))
          buckets.delete(`${b.windowMs}:${b.start}`);
      }
      for (const b of decision.buckets) {
        const where = `${b.windowMs}:${b.start}`;
        buckets.set(where, (buckets.get(where) ?? 0) + decision.granted);
      }
      return decision.retryAt
        ? { granted: decision.granted, retryAt: decision.retryAt }
        : { granted: decision.granted };
    },
  };
}
