import { isStoreOutage } from '../base/errors.js';
import type { ClaimedDelivery } from '../store/records.js';
import type { DeliveryEvents } from './delivery-events.js';
import type { DeliveryPipeline } from './delivery-pipeline.js';
import { renewLeasesEvery } from './lease-renewal.js';
import type { MailingSettler } from './mailing-settle.js';
import type { WorkerParts } from './worker-parts.js';

/** A batch a claim started: how many deliveries it holds, and its end. */
export interface ClaimedBatch {
  readonly count: number;
  /** Resolves when the batch is delivered and its mailings settled; never rejects (failures are logged). */
  readonly done: Promise<void>;
}

/** The batches of a worker: claimed, delivered through the pipeline, then settled. */
export interface ClaimedBatches {
  /** Claims up to `limit` due deliveries and starts delivering them; resolves to the batch, if any. */
  claim(limit: number): Promise<ClaimedBatch | undefined>;
  /** The `done` of every batch still in flight (each leaves the set when it ends). */
  readonly inFlight: ReadonlySet<Promise<void>>;
}

/** What {@link createClaimedBatches} uses: the worker's parts, its pipeline and its settler. */
export interface ClaimedBatchesParts extends WorkerParts {
  readonly pipeline: DeliveryPipeline;
  readonly settler: MailingSettler;
}

/** A worker's batches in flight (the set is the worker's own). */
export function createClaimedBatches(parts: ClaimedBatchesParts): ClaimedBatches {
  const { ctx, opts, store, pipeline, settler } = parts;
  const { clock, logger } = ctx;
  const inFlight = new Set<Promise<void>>();

  async function deliverClaimed(claimed: ClaimedDelivery[]): Promise<void> {
    const renew = renewLeasesEvery(parts, claimed);
    try {
      await pipeline.deliverBatch(claimed);
    } finally {
      clearInterval(renew);
    }
    await settler.settleBatch(claimed);
  }

  async function claim(limit: number): Promise<ClaimedBatch | undefined> {
    const claimed = await store.claimDeliveries({ now: clock.now(), limit, leaseMs: opts.leaseMs });
    if (claimed.length === 0) return undefined;
    const broadcast = claimed.reduce((n, d) => (d.priority === 0 ? n : n + 1), 0);
    const events = ctx.events.view<DeliveryEvents>();
    if (broadcast > 0 && events.has('broadcast:claimed'))
      events.emit('broadcast:claimed', { count: broadcast });
    const done = deliverClaimed(claimed).catch((error: unknown) => {
      if (isStoreOutage(error)) return;
      logger.error(
        { err: error },
        'delivering a batch failed; its deliveries are retried when their leases expire',
      );
    });
    inFlight.add(done);
    void done.finally(() => inFlight.delete(done));
    return { count: claimed.length, done };
  }

  return { claim, inFlight };
}
