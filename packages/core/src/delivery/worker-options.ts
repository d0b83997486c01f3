import { availableParallelism } from 'node:os';
/** Worker settings. */
export interface WorkerOptions {
  /** Deliveries sent at once by one worker. @default 8 */
  concurrency?: number;
  /**
   * Deliveries claimed per round trip to the store, and the most a worker holds claimed without a
   * durable outcome: what a crash of the worker can send twice (with the same Message-ID). @default 100
   */
  batchSize?: number;
  /** Lease length of a claim. @default 60_000 */
  leaseMs?: number;
  /** Idle poll interval when nothing is due. @default 250 */
  pollMs?: number;
  /** Attempts before a transient failure becomes final. @default 8 */
  maxAttempts?: number;
  /** First retry delay; doubles each attempt, with jitter. @default 1_000 */
  retryBaseMs?: number;
  /** Cap of the retry delay. @default 300_000 */
  retryMaxMs?: number;
  /**
   * Messages per second across this worker, whatever the number of pooled connections (0 = unlimited):
   * no one-second window at the receiving server holds more (see `createSendRateLimiter`). @default 0
   */
  ratePerSecond?: number;
  /**
   * Messages per second of each project within this worker (0 = unlimited), as a number for every
   * project or a function of the project id. Applies on top of `ratePerSecond`. @default 0
   */
  projectRatePerSecond?: number | ((projectId: string) => number);
  /**
   * No retry is scheduled later than this long after the delivery first became due (accept time, or
   * `scheduleFor`); a transient failure past it is final, as after `maxAttempts` (0 = no limit).
   * @default 86_400_000 (one day)
   */
  maxAgeMs?: number;
  /**
   * After a 421 or 454 reply (the relay is overloaded or throttling), sending pauses this long and the
   * concurrency is halved; it recovers by one for each run of successes. Repeated slow-downs double
   * the pause, up to a minute. @default 5_000
   */
  throttlePauseMs?: number;
  /**
   * How long the worker stops sending when the transport says the account may not send for now
   * (`backpressure: 'pause'`, for example Amazon SES `SendingPausedException`): the failed deliveries wait
   * for the end of the pause without it counting against them, then one send probes; each pause in a
   * row doubles, up to 15 minutes. @default 60_000
   */
  transportPauseMs?: number;
  /**
   * Outcomes are recorded in bulk (`Store.completeDeliveries`): as soon as this many wait... @default 50
   */
  flushEvery?: number;
  /** ... or at the latest this long after the first of them, so progress stays live. @default 200 */
  flushMs?: number;
  /**
   * Worker threads that render recipients and build their MIME, leaving the main thread to the store
   * and the sockets (0 = render on the main thread). A transport that wants the message as fields
   * (`capabilities.fields`: the memory transport) renders on the main thread.
   * `'auto'`: one thread where the process may use two cores or more (`os.availableParallelism()`),
   * none on one core. A thread costs CPU per message (the hand-over, a second heap) and RSS, and pays
   * where a second core is there to run it (figures: BENCHMARKS.md, delivery-corpus).
   * The thread starts with the first delivery it builds. @default 'auto'
   */
  renderThreads?: number | 'auto';
}

/** Worker settings with their defaults applied (`renderThreads: 'auto'` resolved to a number). */
export type ResolvedWorkerOptions = Omit<Required<WorkerOptions>, 'renderThreads'> & {
  renderThreads: number;
};

/** The defaults of {@link WorkerOptions}. */
export const WORKER_DEFAULTS: Required<WorkerOptions> = {
  concurrency: 8,
  batchSize: 100,
  leaseMs: 60_000,
  pollMs: 250,
  maxAttempts: 8,
  retryBaseMs: 1_000,
  retryMaxMs: 300_000,
  ratePerSecond: 0,
  projectRatePerSecond: 0,
  maxAgeMs: 86_400_000,
  throttlePauseMs: 5_000,
  transportPauseMs: 60_000,
  flushEvery: 50,
  flushMs: 200,
  renderThreads: 'auto',
};

/**
 * `renderThreads` as a number: `'auto'` is one thread where the process may use two cores or more,
 * none on one core (where a thread only adds its messaging and a second heap). One thread, not more:
 * the main thread still writes every message to its socket and the relay (or a sink on the same
 * machine) needs CPU too (BENCHMARKS.md, delivery-corpus).
 */
export function resolveRenderThreads(
  setting: WorkerOptions['renderThreads'],
  cores: number = availableParallelism(),
): number {
  if (setting === undefined || setting === 'auto') return cores >= 2 ? 1 : 0;
  return Math.max(0, Math.floor(setting));
}
