/**
 * A send-rate limit that holds where it matters, at the receiving server: no one-second window there
 * holds more than `perSecond` arrivals, however the sends are spread over pooled connections and however
 * their latency varies.
 */
export interface SendRateLimiter {
  /**
   * Resolves when the caller may start one send, with the function to call once that send has settled
   * (accepted or failed). Until it is called the send counts against the limit.
   */
  acquire(): Promise<() => void>;
}

const noop = (): void => {};

/**
 * A limiter allowing `perSecond` sends per second; 0 or less means unlimited.
 *
 * A message arrives at the server at some moment between the start of its send and its settlement. A send
 * may start only while fewer than `perSecond` sends are in flight or settled within the last second: then
 * any second-long window at the server holds at most `perSecond` arrivals, whatever the latency (of all the
 * sends arriving in a window, the last one to start saw every other either in flight or settled less than
 * a second before). Starts are also paced `1000 / perSecond` ms apart, so the budget is spread over the
 * second instead of spent in a burst. The cost of the guarantee is the latency: about `perSecond × 1000 /
 * (1000 + latency)` sends per second in steady state.
 */
export function createSendRateLimiter(
  perSecond: number,
  now: () => number = () => performance.now(),
): SendRateLimiter {
  if (!(perSecond > 0)) return { acquire: async () => noop };
  const spacing = 1000 / perSecond;
  // Settlement times of the last second, oldest first (a ring kept compact by trimming its head).
  const settled: number[] = [];
  let head = 0;
  let inFlight = 0;
  let lastStart = Number.NEGATIVE_INFINITY;
  const waiters: Array<() => void> = [];
  let timer: ReturnType<typeof setTimeout> | undefined;

  const trim = (t: number): void => {
    while (head < settled.length && (settled[head] as number) <= t - 1000) head++;
    if (head > 1024 && head * 2 > settled.length) {
      settled.splice(0, head);
      head = 0;
    }
  };

  // Lets waiters start, in order, while the limit allows; otherwise sleeps until it may.
  const pump = (): void => {
    timer = undefined;
    while (waiters.length > 0) {
      const t = now();
      trim(t);
      const used = inFlight + settled.length - head;
      let wait = 0;
      if (used >= perSecond) {
        // Only a settlement leaving the window frees a place; an in-flight one will call pump on release.
        if (settled.length - head === 0) return;
        wait = (settled[head] as number) + 1000 - t;
      }
      wait = Math.max(wait, lastStart + spacing - t);
      if (wait > 0) {
        timer = setTimeout(pump, Math.max(1, Math.ceil(wait)));
        return;
      }
      lastStart = t;
      inFlight++;
      (waiters.shift() as () => void)();
    }
  };

  return {
    acquire() {
      return new Promise<() => void>((resolve) => {
        let released = false;
        const release = (): void => {
          if (released) return;
          released = true;
          inFlight--;
          settled.push(now());
          if (timer === undefined) pump();
        };
        waiters.push(() => resolve(release));
        if (timer === undefined) pump();
      });
    },
  };
}
