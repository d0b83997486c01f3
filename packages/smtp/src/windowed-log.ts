import type { Logger } from '@mailroom/core';

/**
 * Counts a kind of abuse and logs it once per window instead of once per event: a flood of forged tokens
 * or refused connections is thousands of events a second, and a log line each would be the attack's
 * amplifier. The first event of a window is logged at once (so a new attack shows up without delay);
 * the count of the events that followed is logged with the next event after the window closes.
 */
export interface WindowedLog {
  /** Counts one event; logs when it opens a new window. */
  note(fields?: Record<string, unknown>): void;
  /** Events counted since the listener started. */
  readonly total: number;
}

/** A {@link WindowedLog} writing `message` at warn level. */
export function windowedLog(
  logger: Logger,
  message: string,
  windowMs: number,
  now: () => number = Date.now,
): WindowedLog {
  let windowStart = Number.NEGATIVE_INFINITY;
  let inWindow = 0;
  let total = 0;
  return {
    note(fields = {}) {
      total++;
      const at = now();
      if (at - windowStart < windowMs) {
        inWindow++;
        return;
      }
      // `previousWindow`: the events of the window that just closed (its first one was logged then).
      logger.warn({ ...fields, previousWindow: inWindow, total, windowMs }, message);
      windowStart = at;
      inWindow = 1;
    },
    get total() {
      return total;
    },
  };
}
