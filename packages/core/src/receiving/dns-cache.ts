import { type DnsResolver, isNoRecord } from '../domains/dns-lookup.js';

/** How long a received message's DNS answer is reused: a burst from one sending domain asks once. */
export const RECEIVING_DNS_CACHE_MS = 30_000;
/** Names (with their types) kept at once; the oldest go first. */
const CACHED_NAMES = 2_000;

/** The resolvers {@link cachedResolver} made: what is judged through them may be kept as long (`spf-cache.ts`). */
const caching = new WeakSet<DnsResolver>();

/** Whether `resolver` keeps its answers ({@link cachedResolver}); an app's own resolver may not. */
export function isCachedResolver(resolver: DnsResolver): boolean {
  return caching.has(resolver);
}

/**
 * `resolver` with its answers kept {@link RECEIVING_DNS_CACHE_MS}, for the checks of received mail (SPF,
 * DKIM, DMARC): node's resolver keeps nothing, so every message from the same domain asked the same
 * two to four questions again (a tenth of a message's CPU in the `inbound-cpu` profile). Answers and
 * "no such record" (ENOTFOUND, ENODATA) are kept; a failure (timeout, SERVFAIL) is not, so the next
 * message asks again. Lookups of one name in flight at once are asked once. A DNS record's own TTL is
 * not known here (node's TXT lookups do not return it): 30 s is below the TTL of nearly every SPF,
 * DKIM and DMARC record, so a record changed is seen at most that much later.
 */
export function cachedResolver(
  resolver: DnsResolver,
  options: { ms?: number; now?: () => number } = {},
): DnsResolver {
  const ms = options.ms ?? RECEIVING_DNS_CACHE_MS;
  const now = options.now ?? Date.now;
  const kept = new Map<string, { until: number; answer: Promise<unknown> }>();
  const cached: DnsResolver = {
    resolve(name, rrtype) {
      const key = `${rrtype} ${name.toLowerCase()}`;
      const found = kept.get(key);
      if (found && found.until > now()) return found.answer;
      if (found) kept.delete(key);
      const answer = resolver.resolve(name, rrtype);
      const entry = { until: now() + ms, answer };
      kept.set(key, entry);
      if (kept.size > CACHED_NAMES) kept.delete(kept.keys().next().value as string);
      answer.catch((error: unknown) => {
        if (!isNoRecord(error) && kept.get(key) === entry) kept.delete(key);
      });
      return answer;
    },
  };
  caching.add(cached);
  return cached;
}
