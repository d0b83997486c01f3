/** What {@link MailroomWorker.drain} does about deliveries that failed and wait for a retry. */
export interface DrainOptions {
  /**
   * How long, in all, `drain` waits for the retries of deliveries it tried and that failed transiently
   * (an unreachable relay, a 4xx). When some still wait after that, it rejects.
   * @default 30_000
   */
  retryWaitMs?: number;
  /**
   * `'wait'`: wait for retries (up to `retryWaitMs`), then reject with `TRANSPORT_TRANSIENT` if any still
   * waits. `'leave'`: resolve as soon as nothing is due now and leave them queued, for a running worker
   * (tests of the retries themselves).
   * @default 'wait'
   */
  retries?: 'wait' | 'leave';
}

/** The delivery loop. Several may run against one store. */
export interface MailroomWorker {
  /** Start polling in the background. */
  start(): void;
  /** Stop claiming; resolves when in-flight sends have finished. */
  stop(): Promise<void>;
  /**
   * Run until nothing is due, for tests and scripts: deliveries scheduled for later (a broadcast's
   * `scheduleFor`) do not count, and the function resolves once what is due now has an outcome. A delivery
   * this worker tried that failed transiently is retried as it comes due, for up to `retryWaitMs` in all;
   * if some still wait for a retry after that, `drain` rejects with a `TRANSPORT_TRANSIENT` error naming
   * the last error, how many wait and when the next attempt is (they stay queued: a running worker
   * retries them). So `await send(...); await worker.drain()` never resolves while the message is unsent
   * for a reason that may pass, and never hangs for the whole retry schedule (about a day).
   * @throws MailroomError `TRANSPORT_TRANSIENT` (retryable) when deliveries still wait for a retry.
   * @example await mailroom.worker.drain({ retryWaitMs: 120_000 }); // a relay that restarts slowly
   */
  drain(options?: DrainOptions): Promise<void>;
  /** Claim and process one round; returns how many deliveries were processed. */
  runOnce(): Promise<number>;
}
