import type { Clock, Logger } from '../base/base-types.js';
import { isStoreOutage, MailroomError } from '../base/errors.js';
import type { DeliveryOutcome } from '../store/delivery-queue.js';
import type { DestinationLimitStore, TokenWindow } from '../store/destination-limit-store.js';
import {
  createDestinationResolver,
  type DestinationLimits,
  type DestinationOptions,
  type DestinationResolver,
} from './destinations.js';
import { createTokenPrefetch, type TokenPrefetch } from './token-prefetch.js';

/** What the destination hears when a send it admitted settles. */
export type DestinationSignal = 'ok' | 'failed' | 'slow-down';

/** The answer of {@link DestinationGate.admit}: go (and say how it went), or come back at `until`. */
export type Admission =
  | { readonly go: true; done(signal: DestinationSignal): void }
  | { readonly go: false; readonly until: Date; readonly reason: string };

/**
 * The worker's gate per destination: the limits shared through the store (`DestinationLimitStore`), the
 * sends at once per destination, and the destination's own slow-down. A delivery whose destination is
 * at its limit is not sent and not held: the pipeline puts it back (`deferredOutcome`) until the time the
 * gate names, without counting an attempt. Other gates of the same shape (a sender domain's warm-up
 * allowance) can be added as further keys of the same store primitive.
 */
export interface DestinationGate {
  /** The destination of an address. */
  destinationOf(address: string): Promise<string>;
  /**
   * Before any work on a delivery (rendering): when its destination is known to take nothing now (a
   * refused take, a slow-down pause), the time to come back; otherwise undefined.
   */
  closedUntil(destination: string): Date | undefined;
  /** Right before the send: a place for one send to `destination` now, or the time to come back. */
  admit(destination: string): Promise<Admission>;
  /** When a slow-down of `destination` ends (for the retry of the send that heard it), if it is paused. */
  pausedUntil(destination: string): Date | undefined;
}

/** How long a delivery waits when its destination has all its sends at once in flight. */
const BUSY_DEFER_MS = 1_000;
/** How long a delivery waits when the store could not be asked. */
const STORE_FAILED_DEFER_MS = 1_000;
const MAX_PAUSE_MS = 60_000;
/** The least share of its limits a slowed-down destination keeps. */
const MIN_FACTOR = 1 / 16;

/** One destination as this worker sees it. */
interface DestinationState {
  name: string;
  limits: DestinationLimits | undefined;
  /** Sends running now. */
  inFlight: number;
  /** Sends at once allowed now (Infinity: no bound). */
  cap: number;
  /** Share of the limits in force after slow-downs (1: all). */
  factor: number;
  successes: number;
  pauseMs: number;
  /** Epoch ms until which sends wait: a slow-down's pause, or the store's refusal. */
  closedUntil: number;
  closedReason: string;
  /** Takes waiting for the store, first come first served. */
  waiting: Array<(granted: boolean, until: number, reason: string) => void>;
  asking: boolean;
  /** Tokens taken ahead of the sends, used within their bucket (see token-prefetch.ts). */
  prefetch: TokenPrefetch;
  /** Deferrals to one time get increasing milliseconds, so they come back in the order they were put back. */
  lastUntil: number;
  order: number;
}

/** Options of {@link createDestinationGate} besides the destinations' own. */
export interface DestinationGateParts {
  store: DestinationLimitStore;
  clock: Clock;
  logger: Logger;
  /** The worker's concurrency: a slowed-down destination without a bound of its own is free again at this. */
  concurrency: number;
}

/** The gate of one worker for `options`. */
export function createDestinationGate(
  options: DestinationOptions,
  parts: DestinationGateParts,
): DestinationGate {
  const { store, clock, logger } = parts;
  const resolver: DestinationResolver = createDestinationResolver(options, () => clock.now().getTime());
  const firstPause = options.slowDownPauseMs ?? 5_000;
  const states = new Map<string, DestinationState>();
  const now = () => clock.now().getTime();

  const stateOf = (name: string): DestinationState => {
    let state = states.get(name);
    if (!state) {
      const limits = options.limits?.[name] ?? options.limits?.['*'];
      state = {
        name,
        limits,
        inFlight: 0,
        cap: limits?.concurrency ?? Number.POSITIVE_INFINITY,
        factor: 1,
        successes: 0,
        pauseMs: firstPause,
        closedUntil: 0,
        closedReason: '',
        waiting: [],
        asking: false,
        prefetch: createTokenPrefetch(),
        lastUntil: 0,
        order: 0,
      };
      states.set(name, state);
    }
    return state;
  };

  const windowsOf = (state: DestinationState): TokenWindow[] => {
    const l = state.limits;
    if (!l) return [];
    const scaled = (limit: number) => Math.max(1, Math.floor(limit * state.factor));
    const windows: TokenWindow[] = [];
    if (l.perSecond !== undefined) windows.push({ windowMs: 1_000, limit: scaled(l.perSecond) });
    if (l.perMinute !== undefined) windows.push({ windowMs: 60_000, limit: scaled(l.perMinute) });
    if (l.perHour !== undefined) windows.push({ windowMs: 3_600_000, limit: scaled(l.perHour) });
    if (l.perDay !== undefined) windows.push({ windowMs: 86_400_000, limit: scaled(l.perDay) });
    return windows;
  };

  /** A come-back time for `state`, a millisecond after the last one to the same time (keeps the order). */
  const orderedUntil = (state: DestinationState, until: number): number => {
    if (until === state.lastUntil) return until + ++state.order;
    state.lastUntil = until;
    state.order = 0;
    return until;
  };

  const refusal = (state: DestinationState, until: number, reason: string): Admission => ({
    go: false,
    until: new Date(orderedUntil(state, until)),
    reason,
  });

  const settle = (state: DestinationState, signal: DestinationSignal): void => {
    state.inFlight--;
    if (signal === 'slow-down') {
      const before = Number.isFinite(state.cap) ? state.cap : Math.max(1, state.inFlight + 1);
      state.cap = Math.max(1, Math.floor(before / 2));
      state.factor = Math.max(MIN_FACTOR, state.factor / 2);
      state.successes = 0;
      // Tokens held were taken under the limits before the halving.
      state.prefetch.drop();
      // Sends in flight together may all hear it: one pause, extended, not stacked.
      const until = now() + state.pauseMs;
      if (until > state.closedUntil) {
        state.closedUntil = until;
        state.closedReason = `destination ${state.name} asked to slow down`;
        logger.warn(
          { destination: state.name, pauseMs: state.pauseMs, concurrency: state.cap, share: state.factor },
          'destination asked to slow down; its sends pause, then resume slower',
        );
      }
      state.pauseMs = Math.min(MAX_PAUSE_MS, state.pauseMs * 2);
    } else if (signal === 'ok') {
      state.pauseMs = firstPause;
      const configured = state.limits?.concurrency ?? Number.POSITIVE_INFINITY;
      const recovering = state.cap < configured || state.factor < 1;
      if (recovering && ++state.successes >= Math.min(state.cap, 10)) {
        // Probe back up: one more send at once and twice the share, after each run of successes.
        state.successes = 0;
        state.factor = Math.min(1, state.factor * 2);
        state.cap = state.cap + 1 >= Math.min(configured, parts.concurrency) ? configured : state.cap + 1;
      }
    }
  };

  /** Asks the store for the tokens of every take waiting, in one call; hands them out in order. */
  const ask = (state: DestinationState, windows: TokenWindow[]): void => {
    if (state.asking || state.waiting.length === 0) return;
    state.asking = true;
    const takers = state.waiting.splice(0);
    const at = clock.now();
    const count = takers.length + state.prefetch.extra(windows, at.getTime());
    store
      .takeTokens({ key: `dest:${state.name}`, count, windows, now: at })
      .then(
        ({ granted, retryAt }) => {
          state.prefetch.keep(granted - takers.length, windows, at.getTime());
          if (granted < takers.length) {
            state.closedUntil = Math.max(state.closedUntil, retryAt?.getTime() ?? now() + BUSY_DEFER_MS);
            state.closedReason = `destination ${state.name} is at its limit`;
          }
          takers.forEach((taker, i) => {
            taker(i < granted, state.closedUntil, state.closedReason);
          });
        },
        (error: unknown) => {
          // A store outage is logged once, by the engine's watch of the store.
          if (!isStoreOutage(error)) {
            logger.warn({ err: error, destination: state.name }, 'taking send tokens failed; the sends wait');
          }
          for (const taker of takers) taker(false, now() + STORE_FAILED_DEFER_MS, 'send limits unavailable');
        },
      )
      .finally(() => {
        state.asking = false;
        // Sends that came meanwhile use the tokens just taken ahead, before the store is asked again.
        const t = now();
        while (state.waiting.length > 0 && state.closedUntil <= t && state.prefetch.take(t)) {
          state.waiting.shift()?.(true, 0, '');
        }
        ask(state, windowsOf(state));
      });
  };

  return {
    destinationOf: (address) => resolver.resolve(address),

    closedUntil(destination) {
      const state = states.get(destination);
      if (!state || state.closedUntil <= now()) return undefined;
      return new Date(orderedUntil(state, state.closedUntil));
    },

    pausedUntil(destination) {
      const state = states.get(destination);
      return state && state.closedUntil > now() ? new Date(state.closedUntil) : undefined;
    },

    async admit(destination) {
      const state = stateOf(destination);
      const t = now();
      if (state.closedUntil > t) return refusal(state, state.closedUntil, state.closedReason);
      if (state.inFlight >= state.cap) {
        return refusal(
          state,
          t + BUSY_DEFER_MS,
          `destination ${destination} has ${state.cap} sends in flight`,
        );
      }
      state.inFlight++;
      let settled = false;
      const admitted: Admission = {
        go: true,
        done(signal) {
          if (settled) return;
          settled = true;
          settle(state, signal);
        },
      };
      const windows = windowsOf(state);
      if (windows.length === 0) return admitted;
      state.prefetch.count(t);
      if (state.prefetch.take(t)) return admitted;
      const granted = await new Promise<Admission>((resolve) => {
        state.waiting.push((ok, until, reason) => resolve(ok ? admitted : refusal(state, until, reason)));
        ask(state, windows);
      });
      if (!granted.go) state.inFlight--;
      return granted;
    },
  };
}

/**
 * A delivery put back unsent because its destination takes nothing now: queued for `until`, its claim's
 * attempt given back (`uncounted`), so that waiting for a limit never uses up its attempts or its
 * retries' backoff. Emits no event (nothing was attempted).
 */
export function deferredOutcome(until: Date, reason: string, now: Date): DeliveryOutcome {
  return {
    status: 'queued',
    nextAttemptAt: until,
    uncounted: true,
    lastError: `${reason}; next try at ${until.toISOString()}`,
    now,
  };
}

/**
 * Whether a failed send is a destination's "slow down": 421 (service not available), 450 (mailbox busy,
 * "too much mail"), 454, or any 4.7.x status (4.7.0 "too many", 4.7.28 rate limited), and the
 * transport's own `slow-down`.
 */
export function isDestinationSlowDown(error: unknown): boolean {
  if (!(error instanceof MailroomError)) return false;
  if (error.backpressure === 'slow-down') return true;
  if (error.backpressure === 'pause') return false;
  const code = error.responseCode;
  if (code === 421 || code === 450 || code === 454) return true;
  return code !== undefined && code >= 400 && code < 500 && /\b4\.7\.\d{1,3}\b/.test(error.response ?? '');
}
