import type { Clock } from './base-types.js';

/** The wall clock. */
export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to; for tests and simulations. */
export interface ManualClock extends Clock {
  /** Move forward by `ms`. */
  advance(ms: number): void;
  /** Jump to `date`. */
  set(date: Date): void;
}

/** A {@link ManualClock} starting at `start`. */
export function manualClock(start: Date = new Date('2030-01-01T00:00:00.000Z')): ManualClock {
  let t = start.getTime();
  return {
    now: () => new Date(t),
    advance: (ms) => {
      t += ms;
    },
    set: (date) => {
      t = date.getTime();
    },
  };
}
