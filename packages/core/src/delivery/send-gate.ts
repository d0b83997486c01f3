/** What the gate hears when a send that held a place settles (`pause`: the account may not send for now). */
export type GateSignal = 'ok' | 'failed' | 'slow-down' | 'pause';

/**
 * Bounds the sends of one worker running at once, and slows them down when the relay asks (421, 454):
 * the limit is halved and sending pauses for a while; each run of successes as long as the current
 * limit raises it by one again, up to the configured concurrency (additive increase, multiplicative
 * decrease, as TCP does with its window).
 */
export interface SendGate {
  /** Resolves when a send may start; pass its result to the returned function once it settled. */
  acquire(): Promise<(result: GateSignal) => void>;
  /** Sends allowed at once now. */
  readonly limit: number;
  /** Sends running now. */
  readonly active: number;
  /** Milliseconds until sends may start again (0 when not paused). */
  readonly resumesInMs: number;
}

/** Options of {@link createSendGate}. */
export interface SendGateOptions {
  /** The most sends at once (the limit recovers up to this). */
  concurrency: number;
  /** Pause after the first slow-down; doubles on each further one in a row, up to 60 s. */
  pauseMs: number;
  /**
   * Pause after the first `pause` result (the transport may not send for now); doubles on each further
   * one in a row, up to 15 minutes. Sends resume one at a time (the first one probes).
   * @default 60000
   */
  transportPauseMs?: number;
  now?: () => number;
}

const MAX_PAUSE_MS = 60_000;
const MAX_TRANSPORT_PAUSE_MS = 15 * 60_000;

/** A gate for one worker's sends. */
export function createSendGate(options: SendGateOptions): SendGate {
  const max = Math.max(1, Math.floor(options.concurrency));
  const now = options.now ?? (() => performance.now());
  let limit = max;
  let active = 0;
  let successes = 0;
  let pausedUntil = 0;
  let pause = options.pauseMs;
  const firstTransportPause = options.transportPauseMs ?? 60_000;
  let transportPause = firstTransportPause;
  let transportPausedUntil = 0;
  const waiters: Array<() => void> = [];
  let timer: ReturnType<typeof setTimeout> | undefined;

  const pump = (): void => {
    const wait = pausedUntil - now();
    if (wait > 0) {
      if (timer === undefined && waiters.length > 0) {
        timer = setTimeout(() => {
          timer = undefined;
          pump();
        }, Math.ceil(wait));
      }
      return;
    }
    while (waiters.length > 0 && active < limit) {
      active++;
      (waiters.shift() as () => void)();
    }
  };

  const settle = (result: GateSignal): void => {
    active--;
    if (result === 'slow-down') {
      limit = Math.max(1, Math.floor(limit / 2));
      successes = 0;
      // Several sends in flight may all hear the same 421: one pause, extended, not stacked.
      pausedUntil = Math.max(pausedUntil, now() + pause);
      pause = Math.min(MAX_PAUSE_MS, pause * 2);
    } else if (result === 'pause') {
      limit = 1;
      successes = 0;
      // The sends in flight when the account was paused all hear it: one pause, not one each.
      if (now() >= transportPausedUntil) {
        transportPausedUntil = now() + transportPause;
        pausedUntil = Math.max(pausedUntil, transportPausedUntil);
        transportPause = Math.min(MAX_TRANSPORT_PAUSE_MS, transportPause * 2);
      }
    } else if (result === 'ok') {
      pause = options.pauseMs;
      transportPause = firstTransportPause;
      if (limit < max && ++successes >= limit) {
        limit++;
        successes = 0;
      }
    }
    pump();
  };

  return {
    acquire() {
      return new Promise((resolve) => {
        let done = false;
        waiters.push(() =>
          resolve((result) => {
            if (done) return;
            done = true;
            settle(result);
          }),
        );
        pump();
      });
    },
    get limit() {
      return limit;
    },
    get active() {
      return active;
    },
    get resumesInMs() {
      return Math.max(0, pausedUntil - now());
    },
  };
}
