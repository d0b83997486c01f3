/**
 * A token bucket: at most `perSecond` acquisitions in any one-second window, shared by every
 * concurrent sender of one worker (and so across all pooled connections).
 */
export interface RateLimiter {
  /** Resolves when the caller may send one message. */
  acquire(): Promise<void>;
}

/** A limiter allowing `perSecond` per second; 0 or less means unlimited. */
export function createRateLimiter(
  perSecond: number,
  now: () => number = () => performance.now(),
): RateLimiter {
  if (!(perSecond > 0)) return { acquire: async () => {} };
  // A sliding log of the last second's sends: exact for "no window holds more than N", which a bucket
  // refilled continuously does not guarantee at its burst edge.
  const log: number[] = [];
  let head = 0;
  let chain: Promise<void> = Promise.resolve();
  const acquireOne = async (): Promise<void> => {
    for (;;) {
      const t = now();
      while (head < log.length && (log[head] as number) <= t - 1000) head++;
      if (head > 1024) {
        log.splice(0, head);
        head = 0;
      }
      if (log.length - head < perSecond) {
        log.push(t);
        return;
      }
      const wait = (log[head] as number) + 1000 - t;
      await new Promise((r) => setTimeout(r, Math.max(1, Math.ceil(wait))));
    }
  };
  return {
    acquire() {
      const next = chain.then(acquireOne);
      chain = next.catch(() => {});
      return next;
    },
  };
}
