import { createClaimLoop, createIdleWait } from './claim-loop.js';
import { createClaimedBatches } from './claimed-batches.js';
import type { DeliveryContext } from './delivery-context.js';
import { createDeliveryPipeline } from './delivery-pipeline.js';
import { MailingCache } from './mailing-cache.js';
import { createMailingSettler } from './mailing-settle.js';
import { expandSourceSlice, type SourceSliceParts } from './source-slice.js';
import type { MailroomWorker } from './worker-api.js';
import { drainWorker } from './worker-drain.js';
import {
  type ResolvedWorkerOptions,
  resolveRenderThreads,
  WORKER_DEFAULTS,
  type WorkerOptions,
} from './worker-options.js';
import type { WorkerParts } from './worker-parts.js';
import { stopWorker } from './worker-shutdown.js';

/**
 * The delivery loop: expand source jobs a page at a time (`source-slice.ts`), claim due deliveries with a
 * lease (`claimed-batches.ts`, `claim-loop.ts`), deliver them (see `createDeliveryPipeline`), then settle
 * the mailings they belong to (`mailing-settle.ts`). Several workers, in one process or many, may run
 * against one store.
 *
 * A running worker keeps at most `batchSize` deliveries claimed whose outcome is not durable yet, and
 * claims again as soon as half of that room is free, so sending never waits for a whole batch to end.
 * A crash can therefore resend at most `batchSize` deliveries per worker, each with its Message-ID.
 */
export function createWorker(
  ctx: DeliveryContext,
  options: WorkerOptions = {},
): MailroomWorker & {
  /** Deliveries claimed whose outcome is not durable yet. */ readonly outstanding: number;
} {
  const opts: ResolvedWorkerOptions = {
    ...WORKER_DEFAULTS,
    ...options,
    renderThreads: resolveRenderThreads(options.renderThreads),
  };
  const cache = new MailingCache(ctx);
  const parts: WorkerParts = { ctx, opts, store: ctx.store, cache };
  // Read only once deliveries are under way, so after `pipeline` below exists.
  const outstanding = () => pipeline.outstanding;
  const waiter = createIdleWait({ batchSize: opts.batchSize, outstanding });
  const pipeline = createDeliveryPipeline(ctx, opts, cache, waiter.onDurable);
  const settler = createMailingSettler(parts);
  const sourceParts: SourceSliceParts = { ...parts, settle: settler.settle };
  const expandSources = () => expandSourceSlice(sourceParts);
  const batches = createClaimedBatches({ ...parts, pipeline, settler });
  const loop = createClaimLoop({ ...parts, batches, outstanding, expandSources, waiter });

  async function runOnce(): Promise<number> {
    const sources = await expandSources();
    const batch = await batches.claim(Math.max(1, opts.batchSize - pipeline.outstanding));
    await batch?.done;
    return sources + (batch?.count ?? 0);
  }

  return {
    start: () => loop.start(),
    stop: () => stopWorker({ loop, pipeline, batches }),
    drain: (drainOptions) => drainWorker({ ...parts, pipeline, runOnce }, drainOptions),
    runOnce,
    get outstanding() {
      return pipeline.outstanding;
    },
  };
}
