import type { Logger } from '../base/base-types.js';
import { isStoreOutage } from '../base/errors.js';
import type { DeliveryOutcome } from '../store/delivery-queue.js';
import type { ClaimedDelivery } from '../store/records.js';
import type { DeliveryQueue } from '../store/store.js';

/** One outcome waiting to be written. */
export interface BufferedOutcome {
  delivery: ClaimedDelivery;
  outcome: DeliveryOutcome;
}

/** Options of {@link createOutcomeBuffer}. */
export interface OutcomeBufferOptions<T extends BufferedOutcome> {
  /** Write as soon as this many outcomes wait. */
  maxItems: number;
  /** Write at the latest this long after the first outcome started waiting. */
  maxDelayMs: number;
  /** Called, in order, with every outcome once it is durable (`written` false: the lease was lost). */
  onWritten(item: T, written: boolean): void;
}

/**
 * Collects a worker's outcomes and records them with `Store.completeDeliveries`, many per round trip.
 * Progress stays live (a write at least every `maxDelayMs`), and what a crash can lose is bounded by what
 * the worker had claimed: an outcome not yet written leaves its delivery leased, to be retried (with the
 * same Message-ID) once the lease expires.
 */
export interface OutcomeBuffer<T extends BufferedOutcome> {
  /** Queue an outcome; resolves once it is durable, with whether it was written (fenced by the lease). */
  add(item: T): Promise<boolean>;
  /** Write what waits now; resolves when everything queued before the call is durable. */
  flush(): Promise<void>;
}

interface Pending<T> {
  item: T;
  settle(written: boolean): void;
}

/** A buffer writing to `store`. */
export function createOutcomeBuffer<T extends BufferedOutcome>(
  store: DeliveryQueue,
  logger: Logger,
  options: OutcomeBufferOptions<T>,
): OutcomeBuffer<T> {
  let pending: Array<Pending<T>> = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Writes run one after another, so outcomes become durable (and events fire) in the order they came.
  let chain: Promise<void> = Promise.resolve();

  const write = async (items: Array<Pending<T>>): Promise<void> => {
    let written: boolean[];
    try {
      written = await store.completeDeliveries(
        items.map(({ item: { delivery, outcome } }) => ({
          id: delivery.id,
          leaseToken: delivery.leaseToken,
          outcome,
        })),
      );
    } catch (error) {
      // Nothing recorded: the deliveries stay leased and are retried when their leases expire.
      if (isStoreOutage(error))
        logger.debug({ err: error, outcomes: items.length }, 'outcomes wait out a store outage');
      else logger.error({ err: error, outcomes: items.length }, 'recording delivery outcomes failed');
      for (const item of items) item.settle(false);
      return;
    }
    items.forEach(({ item, settle }, i) => {
      const ok = written[i] === true;
      if (!ok) logger.warn({ delivery: item.delivery.id }, 'lease lost before the outcome was written');
      options.onWritten(item, ok);
      settle(ok);
    });
  };

  const flush = (): Promise<void> => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (pending.length > 0) {
      const items = pending;
      pending = [];
      chain = chain.then(() => write(items));
    }
    return chain;
  };

  return {
    add(item) {
      return new Promise<boolean>((settle) => {
        pending.push({ item, settle });
        if (pending.length >= options.maxItems) void flush();
        else if (timer === undefined) {
          timer = setTimeout(() => void flush(), options.maxDelayMs);
        }
      });
    },
    flush,
  };
}
