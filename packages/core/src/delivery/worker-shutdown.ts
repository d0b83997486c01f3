import type { ClaimLoop } from './claim-loop.js';
import type { ClaimedBatches } from './claimed-batches.js';
import type { DeliveryPipeline } from './delivery-pipeline.js';

/** What {@link stopWorker} stops, in order. */
export interface ShutdownParts {
  readonly loop: ClaimLoop;
  readonly pipeline: DeliveryPipeline;
  readonly batches: ClaimedBatches;
}

/**
 * `worker.stop()`: the loop first (no new claim), then the pipeline stops starting sends (what is not
 * being sent yet is handed back for any worker), then every batch in flight ends (its outcomes durable,
 * its mailings settled), and only then the render threads stop.
 */
export async function stopWorker({ loop, pipeline, batches }: ShutdownParts): Promise<void> {
  await loop.stop();
  pipeline.halt();
  while (batches.inFlight.size > 0) await Promise.all([...batches.inFlight]);
  await pipeline.close();
}
