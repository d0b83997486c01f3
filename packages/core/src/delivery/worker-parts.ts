import type { DeliveryQueue, MailingStore, SourceJobStore } from '../store/store.js';
import type { DeliveryContext } from './delivery-context.js';
import type { MailingCache } from './mailing-cache.js';
import type { ResolvedWorkerOptions } from './worker-options.js';

/** The store roles a worker uses: the delivery queue, source jobs, and mailings. */
export type WorkerStore = DeliveryQueue & SourceJobStore & MailingStore;

/**
 * What the worker's roles share (the source slice, settling, lease renewal, the claimed batches, the loop,
 * drain): built once by `createWorker` and never changed, so no role allocates it again per batch.
 */
export interface WorkerParts {
  /** The engine's context: clock, logger, event hub, outbox. */
  readonly ctx: DeliveryContext;
  /** The worker's settings with their defaults applied. */
  readonly opts: ResolvedWorkerOptions;
  /** `ctx.store`, seen through the roles a worker uses. */
  readonly store: WorkerStore;
  /** The worker's per-mailing cache of parsed content. */
  readonly cache: MailingCache;
}
