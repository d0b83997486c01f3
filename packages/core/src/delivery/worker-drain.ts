import { MailroomError } from '../base/errors.js';
import type { DeliveryPipeline, RetryWait } from './delivery-pipeline.js';
import type { DrainOptions } from './worker-api.js';
import type { WorkerParts } from './worker-parts.js';

/** Default of `DrainOptions.retryWaitMs`: a relay's restart, not its outage. */
const DEFAULT_RETRY_WAIT_MS = 30_000;

/** Rounds in a row `drain` waits for due work another worker holds before it gives up. */
const MAX_IDLE_ROUNDS = 50;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What {@link drainWorker} uses: the worker's parts, its pipeline (for its retries) and one round. */
export interface DrainParts extends WorkerParts {
  readonly pipeline: DeliveryPipeline;
  /** One round of the worker (`worker.runOnce`): resolves to what it worked on. */
  readonly runOnce: () => Promise<number>;
}

/**
 * `worker.drain()`: rounds until nothing is due for this worker now, then waits for the retries this
 * worker scheduled, up to `retryWaitMs` in all (see `MailroomWorker.drain`).
 * @throws MailroomError `TRANSPORT_TRANSIENT` when deliveries still wait for a retry after that.
 */
export async function drainWorker(parts: DrainParts, options: DrainOptions = {}): Promise<void> {
  const { ctx, store, runOnce } = parts;
  const waitUntil = performance.now() + (options.retryWaitMs ?? DEFAULT_RETRY_WAIT_MS);
  const leave = options.retries === 'leave';
  let idleRounds = 0;
  for (;;) {
    if ((await runOnce()) > 0) {
      idleRounds = 0;
      continue;
    }
    const now = ctx.clock.now();
    const due = await store.nextDueAt();
    // Due work this worker could not claim (another worker holds it): wait a little, then give up
    // rather than spin; drain means "nothing left for this worker to do now".
    if (due && due <= now && ++idleRounds <= MAX_IDLE_ROUNDS) {
      await sleep(10);
      continue;
    }
    if (leave) return;
    const waiting = retriesWaiting(parts.pipeline, due, now);
    const first = waiting[0];
    if (!first) return;
    const wait = first.nextAttemptAt.getTime() - now.getTime();
    if (performance.now() + wait > waitUntil) throw retriesPending(waiting);
    idleRounds = 0;
    await sleep(Math.max(10, wait));
  }
}

/**
 * The retries the pipeline scheduled that still wait, soonest first. One already due while the store
 * has nothing due now was settled elsewhere (another worker, a cancel): it is forgotten.
 */
function retriesWaiting(pipeline: DeliveryPipeline, due: Date | undefined, now: Date): RetryWait[] {
  const nothingDue = !due || due > now;
  for (const [id, wait] of pipeline.retries) {
    if (nothingDue && wait.nextAttemptAt <= now) pipeline.retries.delete(id);
  }
  return [...pipeline.retries.values()].sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime());
}

/** `drain`'s failure: what waits for a retry, the last error, and what the caller can do. */
function retriesPending(waiting: readonly RetryWait[]): MailroomError {
  const first = waiting[0] as RetryWait;
  const count = waiting.length === 1 ? '1 delivery waits' : `${waiting.length} deliveries wait`;
  const latest = waiting.reduce((a, b) => (b.nextAttemptAt > a.nextAttemptAt ? b : a));
  return new MailroomError(
    'TRANSPORT_TRANSIENT',
    `drain: ${count} for a retry after a transport failure: ${latest.error} ` +
      `(${first.address} in ${first.mailingRef}, next attempt at ${first.nextAttemptAt.toISOString()}). ` +
      'They stay queued and a running worker retries them (worker.start()); check the transport, or give ' +
      'drain({ retryWaitMs }) more time.',
  );
}
