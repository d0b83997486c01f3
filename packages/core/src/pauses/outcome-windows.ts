/**
 * The in-process counters of the reputation guard: what this worker's outcomes add between two reads of
 * the store. Each add is O(1) and allocates nothing, so counting every outcome costs the delivery loop
 * next to nothing (BENCHMARKS.md, "The reputation guard on every outcome").
 */

/** Attempts and refusals over a rolling window, kept in buckets. */
export interface WindowCounts {
  /** Count one attempt at `now` (ms), refused or not. */
  add(now: number, refused: boolean): void;
  /**
   * The attempts and refusals of the window ending at `now`: the same object at every call (read it
   * before the next), so that judging at every outcome allocates nothing.
   */
  totals(now: number): { readonly attempts: number; readonly refusals: number };
  /** Forget everything (the destination was resumed). */
  clear(): void;
}

/** Buckets of a window: the window reads up to one bucket (1/30) long. */
const BUCKETS = 30;

/** A rolling window of `windowMs`: running totals, a bucket expired as time moves past it. */
export function createWindowCounts(windowMs: number): WindowCounts {
  const width = Math.max(1, Math.ceil(windowMs / BUCKETS));
  const attempts = new Float64Array(BUCKETS);
  const refusals = new Float64Array(BUCKETS);
  /** The bucket number (time / width) of the newest bucket written. */
  let newest = -1;
  let sumAttempts = 0;
  let sumRefusals = 0;
  const totals = { attempts: 0, refusals: 0 };

  /** Moves the ring on to `now`, dropping the buckets that left the window. */
  function advance(now: number): number {
    const bucket = Math.floor(now / width);
    if (bucket <= newest) return bucket;
    const steps = newest < 0 ? BUCKETS : Math.min(BUCKETS, bucket - newest);
    for (let i = 1; i <= steps; i++) {
      const slot = (newest + i) % BUCKETS;
      if (newest < 0) break;
      sumAttempts -= attempts[slot] as number;
      sumRefusals -= refusals[slot] as number;
      attempts[slot] = 0;
      refusals[slot] = 0;
    }
    newest = bucket;
    return bucket;
  }

  return {
    add(now, refused) {
      const slot = advance(now) % BUCKETS;
      attempts[slot] = (attempts[slot] as number) + 1;
      sumAttempts += 1;
      if (refused) {
        refusals[slot] = (refusals[slot] as number) + 1;
        sumRefusals += 1;
      }
    },
    totals(now) {
      advance(now);
      totals.attempts = sumAttempts;
      totals.refusals = sumRefusals;
      return totals;
    },
    clear() {
      attempts.fill(0);
      refusals.fill(0);
      sumAttempts = 0;
      sumRefusals = 0;
    },
  };
}

/** The last `size` sends of a project in this process, and how many of them were recipient-hard bounces. */
export interface LastSends {
  /** Count a send at `now` (ms); sends before `now - maxAgeMs` leave the window. */
  add(hard: boolean, now: number): void;
  readonly sends: number;
  readonly hard: number;
  /** When the oldest send of the window was made (ms); NaN when there is none. */
  readonly since: number;
  clear(): void;
}

/** A ring of the last `size` sends, none older than `maxAgeMs`. */
export function createLastSends(size: number, maxAgeMs: number): LastSends {
  const length = Math.max(1, size);
  const flags = new Uint8Array(length);
  const times = new Float64Array(length);
  let start = 0;
  let sends = 0;
  let hard = 0;
  const dropOldest = () => {
    hard -= flags[start] as number;
    start = (start + 1) % length;
    sends -= 1;
  };
  return {
    add(isHard, now) {
      while (sends > 0 && (times[start] as number) < now - maxAgeMs) dropOldest();
      if (sends === length) dropOldest();
      const slot = (start + sends) % length;
      flags[slot] = isHard ? 1 : 0;
      times[slot] = now;
      sends += 1;
      if (isHard) hard += 1;
    },
    get sends() {
      return sends;
    },
    get hard() {
      return hard;
    },
    get since() {
      return sends === 0 ? Number.NaN : (times[start] as number);
    },
    clear() {
      start = 0;
      sends = 0;
      hard = 0;
    },
  };
}
