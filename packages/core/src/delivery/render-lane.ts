import type { Logger } from '../base/base-types.js';
import { MailroomError } from '../base/errors.js';
import type { ClaimedDelivery } from '../store/records.js';
import type { TransportComposer } from '../transport/transport.js';
import type { MailingEntry } from './mailing-cache.js';
import type { SendRenderGuard } from './render-guard.js';
import { type BuiltMessage, createRenderPool, type RenderPool } from './render-pool.js';

/** The slow lane of sends: a render thread of its own for the projects whose renders run long. */
export interface RenderLane {
  /**
   * The message of one delivery of a slow project, built when its turn comes.
   * @throws MailroomError `RATE_LIMITED` with `retryAfter` (seconds) when the project's render time was
   * used up while the build waited (the delivery waits that long, unbuilt), or what `RenderPool.build`
   * throws.
   */
  build(
    entry: MailingEntry,
    delivery: ClaimedDelivery,
    headers: Record<string, string>,
    now: Date,
  ): Promise<BuiltMessage>;
  close(): Promise<void>;
}

interface Job {
  run(): Promise<BuiltMessage>;
  resolve(built: BuiltMessage): void;
  reject(error: unknown): void;
}

/**
 * One thread, one build at a time, the projects waiting taking turns (round-robin over a map of
 * per-project queues, as previews do): a project whose templates spin until the render limit waits behind
 * its own renders, delays another slow project by one render at most, and never sits in front of a
 * normal project's mail on the shared render threads. Before each build the project's budget is
 * checked: spent, its waiting builds are refused (`RATE_LIMITED`), so its deliveries wait unrendered.
 * The thread starts with the first slow project's build.
 */
export function createRenderLane(options: {
  composer: TransportComposer;
  strictVariables: boolean;
  logger: Logger;
  guard: SendRenderGuard;
}): RenderLane {
  const { guard } = options;
  let pool: RenderPool | undefined;
  const queues = new Map<string, Job[]>();
  let running = false;
  let closed = false;

  function pump(): void {
    if (running || closed) return;
    for (const [projectId, queue] of queues) {
      queues.delete(projectId);
      const wait = guard.waitSeconds(projectId);
      if (wait > 0) {
        for (const job of queue) job.reject(overBudget(guard.msPerMinute, wait));
        continue;
      }
      const job = queue.shift() as Job;
      // Back at the end of the round-robin, if it has more waiting.
      if (queue.length > 0) queues.set(projectId, queue);
      running = true;
      job
        .run()
        .then(job.resolve, job.reject)
        .finally(() => {
          running = false;
          pump();
        });
      return;
    }
  }

  return {
    build(entry, delivery, headers, now) {
      if (closed)
        return Promise.reject(new MailroomError('INTERNAL', 'render lane closed', { retryable: true }));
      const projectId = entry.mailing.projectId;
      return new Promise<BuiltMessage>((resolve, reject) => {
        const run = () => {
          pool ??= createRenderPool({
            threads: 1,
            composer: options.composer,
            strictVariables: options.strictVariables,
            logger: options.logger,
            onRender: (id, ms) => guard.rendered(id, ms),
          });
          return pool.build(entry, delivery, headers, now);
        };
        const queue = queues.get(projectId);
        if (queue) queue.push({ run, resolve, reject });
        else queues.set(projectId, [{ run, resolve, reject }]);
        pump();
      });
    },
    async close() {
      closed = true;
      for (const queue of queues.values())
        for (const job of queue)
          job.reject(new MailroomError('INTERNAL', 'render lane closed', { retryable: true }));
      queues.clear();
      const closing = pool;
      pool = undefined;
      await closing?.close();
      closed = false;
    },
  };
}

/** The refusal of a build whose project used up its render time. */
export function overBudget(msPerMinute: number, waitSeconds: number): MailroomError {
  return new MailroomError(
    'RATE_LIMITED',
    `render time of this project used up (${msPerMinute} ms per minute); next try in ${waitSeconds} s`,
    { retryAfter: waitSeconds },
  );
}
