import { createDeliveryPipeline } from './delivery-pipeline.js';
import type { EngineContext } from './engine-context.js';
import { MailroomError } from './errors.js';
import { MailingCache } from './mailing-cache.js';
import type { MailroomWorker, WorkerOptions } from './mailroom-types.js';
import { SOURCE_EXPANDERS } from './sources/index.js';

/** Worker settings with their defaults applied. */
export type ResolvedWorkerOptions = Required<WorkerOptions>;

/** The defaults of {@link WorkerOptions}. */
export const WORKER_DEFAULTS: ResolvedWorkerOptions = {
  concurrency: 8,
  batchSize: 100,
  leaseMs: 60_000,
  pollMs: 250,
  maxAttempts: 8,
  retryBaseMs: 1_000,
  retryMaxMs: 300_000,
  ratePerSecond: 0,
};

/**
 * The delivery loop: expand source jobs a page at a time, claim due deliveries with a lease, deliver
 * them (see `createDeliveryPipeline`), then settle the mailings they belong to. Several workers, in
 * one process or many, may run against one store.
 */
export function createWorker(ctx: EngineContext, options: WorkerOptions = {}): MailroomWorker {
  const opts: ResolvedWorkerOptions = { ...WORKER_DEFAULTS, ...options };
  const { store, clock, logger, events } = ctx;
  const cache = new MailingCache(ctx);
  const pipeline = createDeliveryPipeline(ctx, opts, cache);
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;

  async function expandOneSourcePage(): Promise<number> {
    const now = clock.now();
    const job = await store.claimSourceJob({ now, leaseMs: opts.leaseMs });
    if (!job) return 0;
    const leaseUntil = new Date(now.getTime() + opts.leaseMs);
    try {
      const entry = await cache.get(job.mailingId);
      if (!entry) throw new MailroomError('NOT_FOUND', `Mailing of source job ${job.id} is gone`);
      const expander = SOURCE_EXPANDERS[job.kind];
      if (!expander) throw new MailroomError('UNPROCESSABLE', `No expander for ${job.kind} sources`);
      const page = await expander.expandPage(job, { ctx, entry, now });
      const result = await store.commitSourcePage(job.id, job.leaseToken, { ...page, leaseUntil, now });
      if (!result) logger.warn({ job: job.id }, 'source job lease lost; another worker continues it');
      else if (page.patch.status === 'done' || page.patch.status === 'failed') await settle(job.mailingId);
    } catch (error) {
      logger.error({ err: error, job: job.id }, 'source job failed');
      const reason = error instanceof Error ? error.message : String(error);
      await store.commitSourcePage(job.id, job.leaseToken, {
        deliveries: [],
        profiles: [],
        profileOptions: { onExistingProfile: 'preserve', onExistingTrait: 'preserve' },
        patch: { status: 'failed', error: reason },
        leaseUntil,
        now,
      });
      await settle(job.mailingId);
    }
    return 1;
  }

  async function settle(mailingId: string): Promise<void> {
    if (await store.completeMailingIfSettled(mailingId, clock.now())) {
      const entry = await cache.get(mailingId);
      if (entry) {
        const { projectId, ref, kind } = entry.mailing;
        events.emit('broadcast:completed', { projectId, ref, kind });
      }
    }
  }

  async function deliverDue(): Promise<number> {
    const claimed = await store.claimDeliveries({
      now: clock.now(),
      limit: opts.batchSize,
      leaseMs: opts.leaseMs,
    });
    if (claimed.length === 0) return 0;
    // A slow relay must not let leases lapse mid-batch: renew while the batch is in flight.
    const renew = setInterval(
      () => {
        const until = new Date(clock.now().getTime() + opts.leaseMs);
        const leases = claimed.map((d) => ({ id: d.id, leaseToken: d.leaseToken }));
        store
          .renewLeases(leases, until)
          .catch((err: unknown) => logger.warn({ err }, 'lease renewal failed'));
      },
      Math.max(1_000, opts.leaseMs / 3),
    );
    renew.unref();
    try {
      await pipeline.deliverBatch(claimed);
    } finally {
      clearInterval(renew);
    }
    for (const id of new Set(claimed.map((d) => d.mailingId))) {
      await store.setMailingStatus(id, ['queued', 'scheduled'], 'sending', clock.now());
      await settle(id);
    }
    return claimed.length;
  }

  async function runOnce(): Promise<number> {
    const sources = await expandOneSourcePage();
    const sent = await deliverDue();
    return sources + sent;
  }

  async function runLoop(): Promise<void> {
    while (running) {
      let n = 0;
      try {
        n = await runOnce();
      } catch (error) {
        logger.error({ err: error }, 'worker round failed');
      }
      if (n === 0 && running) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, opts.pollMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    }
  }

  return {
    start() {
      if (running) return;
      running = true;
      loop = runLoop();
    },
    async stop() {
      running = false;
      wake?.();
      await loop;
      loop = undefined;
    },
    async drain() {
      let idle = 0;
      for (;;) {
        if ((await runOnce()) > 0) {
          idle = 0;
          continue;
        }
        const due = await store.nextDueAt();
        // Due work this worker could not claim (another worker holds it): wait a little, then give up
        // rather than spin; drain means "nothing left for this worker to do now".
        if (!due || due > clock.now() || ++idle > 50) return;
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    runOnce,
  };
}
