import type { DeliveryCounts } from '../store/mailing-store.js';

/**
 * A large mailing's delivery counts, shared for a moment by the status reads that want them (issue 26).
 * Counting a 100,000-recipient broadcast by status walks 100,000 index entries (~6 ms on SQLite, on the
 * thread that also sends); a dashboard and a few clients polling it at tens of reads a second took 10-15 %
 * of the sending rate. Here one count serves every read of the next `ttlMs`, and concurrent reads wait
 * for the same count. Small mailings (fewer than `minTotal` deliveries at their last count) are counted on
 * every read: their count is cheap, and a single message's status is exact.
 */
export interface CountCache {
  /** The mailing's counts: at most `ttlMs` old once the mailing has `minTotal` deliveries, else fresh. */
  counts(mailingId: string): Promise<DeliveryCounts>;
  /** Drop what is held for the mailing (after a change of its deliveries the caller answers with). */
  forget(mailingId: string): void;
}

/** Knobs of {@link createCountCache}. */
export interface CountCacheOptions {
  /** How long a count is reused, milliseconds (default 1000). */
  ttlMs?: number;
  /** Deliveries from which a mailing's counts are reused (default 10,000). */
  minTotal?: number;
  /** A monotonic clock in milliseconds (default `performance.now`): the cost saved is real time. */
  now?: () => number;
}

/** Default reuse time: the staleness the API documents for a large mailing's counts. */
export const COUNT_CACHE_TTL_MS = 1000;
/** Default size from which counts are reused. */
export const COUNT_CACHE_MIN_TOTAL = 10_000;
/** Past this many held mailings, expired entries are swept on the next count. */
const SWEEP_AT = 256;

interface Entry {
  at: number;
  value: Promise<DeliveryCounts>;
  /** Known once the count answered; until then the entry is a count in flight. */
  total?: number;
}

/** A cache in front of `count` (the store's `countDeliveries`). */
export function createCountCache(
  count: (mailingId: string) => Promise<DeliveryCounts>,
  options: CountCacheOptions = {},
): CountCache {
  const ttlMs = options.ttlMs ?? COUNT_CACHE_TTL_MS;
  const minTotal = options.minTotal ?? COUNT_CACHE_MIN_TOTAL;
  const now = options.now ?? (() => performance.now());
  const entries = new Map<string, Entry>();

  const sweep = (at: number): void => {
    for (const [id, entry] of entries) {
      if (entry.total !== undefined && at - entry.at >= ttlMs) entries.delete(id);
    }
  };

  return {
    counts(mailingId) {
      const at = now();
      const held = entries.get(mailingId);
      if (held && (held.total === undefined || at - held.at < ttlMs)) return held.value;
      // Unknown or small: counted now; the entry is kept only if the mailing proves large.
      const entry: Entry = { at, value: count(mailingId) };
      const tracked = held !== undefined;
      if (tracked) entries.set(mailingId, entry);
      entry.value.then(
        (counts) => {
          const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
          if (total < minTotal) {
            if (entries.get(mailingId) === entry) entries.delete(mailingId);
            return;
          }
          entry.total = total;
          if (!tracked) {
            if (entries.size >= SWEEP_AT) sweep(now());
            entries.set(mailingId, entry);
          }
        },
        () => {
          if (entries.get(mailingId) === entry) entries.delete(mailingId);
        },
      );
      return entry.value;
    },
    forget(mailingId) {
      entries.delete(mailingId);
    },
  };
}
