/**
 * While the worker is busy, a paced sender gets its share of POSTs in one burst per window rather than
 * one POST every `1000 / rate` ms: a POST made alone costs many times the CPU of one made in a burst
 * (cold code paths, a wake-up, a socket write and an outcome transaction each), which the
 * `delivery-webhooks` benchmark measured as most of what an endpoint cost the delivery.
 */
export const BUSY_WINDOW_MS = 500;

/** Paces a sender's POSTs while its worker is busy (see `WebhookOptions.busyRatePerSecond`). */
export interface BusyPacer {
  /**
   * Wait for a POST's turn: undefined when it may start now without waiting (not busy and nobody
   * queued), else a promise that resolves when it may start. Turns are granted in call order.
   */
  turn(): Promise<void> | undefined;
}

/**
 * A pacer granting `ratePerSecond * BUSY_WINDOW_MS / 1000` turns per window while `busy()` holds, and
 * every turn at once as soon as it does not (or `ratePerSecond` is 0). A fraction of a turn carries to
 * the next window (1/s is one turn every other window); unused turns do not, and the first window of a
 * busy spell has at least one. Waiting is checked in steps of at most 50 ms, so that the cap lifts soon
 * after the worker is idle; `active()` false ends every wait (the sender is stopping).
 */
export function createBusyPacer(
  ratePerSecond: number,
  busy: () => boolean,
  active: () => boolean,
): BusyPacer {
  const perWindow = (ratePerSecond * BUSY_WINDOW_MS) / 1000;
  const uncapped = () => !(ratePerSecond > 0) || !busy();
  let windowEnds = Number.NEGATIVE_INFINITY;
  let budget = 0;
  // One waiter at a time polls the clock; the others queue behind it (32 sending places polling their
  // own timers fired 32 timers for each turn).
  let queue: Promise<void> = Promise.resolve();
  let waiting = 0;

  async function grant(): Promise<void> {
    while (active()) {
      if (uncapped()) return;
      const now = performance.now();
      if (now >= windowEnds) {
        // After a window that nobody waited through, a new busy spell: its first window has a whole turn.
        const fresh = now >= windowEnds + BUSY_WINDOW_MS;
        windowEnds = now + BUSY_WINDOW_MS;
        budget = fresh
          ? Math.max(1, perWindow)
          : Math.min(budget + perWindow, Math.max(1, Math.ceil(perWindow)));
      }
      if (budget >= 1) {
        budget -= 1;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(50, windowEnds - now)));
    }
  }

  return {
    turn() {
      if (waiting === 0 && uncapped()) return undefined;
      waiting++;
      queue = queue.then(grant).finally(() => {
        waiting--;
      });
      return queue;
    },
  };
}
