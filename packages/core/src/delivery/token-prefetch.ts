import { type TokenWindow, tokenWindowSpan } from '../store/destination-limit-store.js';

/**
 * Tokens a worker took from the store ahead of its sends to one destination, so that a destination far
 * under its limits costs one store write per bucket instead of one per few sends. They are counted
 * against the limits when taken (the store adds them to the current bucket), and they are used only
 * within that bucket of every window: a send then leaves in the bucket its token is counted in, exactly
 * as a send right after its take may, so the margin of `tokenWindowSpan` still covers the time to the
 * receiver. Tokens not used by then are dropped (under the limit is allowed; over never).
 */
export interface TokenPrefetch {
  /** Takes one held token, if one is held and still valid at `now`. */
  take(now: number): boolean;
  /** Tokens to ask for beyond the sends waiting now, for `windows` at `now` (0: no prefetch). */
  extra(windows: readonly TokenWindow[], now: number): number;
  /** Keeps `tokens` granted beyond the waiting sends, by a take at `now` for `windows`. */
  keep(tokens: number, windows: readonly TokenWindow[], now: number): void;
  /** Counts a send admitted at `now` (the rate that sizes the next prefetch). */
  count(now: number): void;
  /** Drops every held token (the limits in force changed). */
  drop(): void;
}

/** The rate is measured over slots of this length. */
const SLOT_MS = 250;
/** Held tokens never outlive this, whatever the windows' buckets: a worker holds no more than it uses within a second. */
const MAX_HOLD_MS = 1_000;
/**
 * At most this share of a bucket's part of a window's limit is taken ahead: a limit that may bind (a few
 * messages a second) is never prefetched, so no other worker is refused for tokens this one may drop.
 */
const MAX_SHARE = 1 / 2;

/** When tokens taken at `now` for `windows` stop being usable: the end of the earliest current bucket. */
export function prefetchExpiry(windows: readonly TokenWindow[], now: number): number {
  const at = new Date(now);
  let until = now + MAX_HOLD_MS;
  for (const w of windows) {
    const { bucket, bucketMs } = tokenWindowSpan(w.windowMs, at);
    until = Math.min(until, bucket + bucketMs);
  }
  return until;
}

/** The prefetch of one destination in one worker. */
export function createTokenPrefetch(): TokenPrefetch {
  let held = 0;
  let until = 0;
  let slotStart = 0;
  let slotCount = 0;
  /** Sends a millisecond in the last full slot. */
  let rate = 0;

  return {
    take(now) {
      if (held === 0) return false;
      if (now >= until) {
        held = 0;
        return false;
      }
      held--;
      return true;
    },
    extra(windows, now) {
      if (rate === 0 || windows.length === 0) return 0;
      const expiry = prefetchExpiry(windows, now);
      let extra = Math.ceil(rate * (expiry - now));
      for (const w of windows) {
        const { bucketMs } = tokenWindowSpan(w.windowMs, new Date(now));
        extra = Math.min(extra, Math.floor((w.limit * bucketMs * MAX_SHARE) / w.windowMs));
      }
      return Math.max(0, extra);
    },
    keep(tokens, windows, now) {
      if (tokens <= 0) return;
      held = tokens;
      until = prefetchExpiry(windows, now);
    },
    count(now) {
      if (now - slotStart >= SLOT_MS) {
        // A long quiet spell lowers the rate: the slot's sends over all the time since it began.
        rate = slotStart === 0 ? 0 : slotCount / (now - slotStart);
        slotStart = now;
        slotCount = 0;
      }
      slotCount++;
    },
    drop() {
      held = 0;
    },
  };
}
