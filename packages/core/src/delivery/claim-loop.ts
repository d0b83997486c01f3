import { isStoreOutage } from '../base/errors.js';
import { yieldToEventLoop } from '../base/event-loop.js';
import type { ClaimedBatches } from './claimed-batches.js';
import type { WorkerParts } from './worker-parts.js';

/** The claim loop's pause between two rounds that found nothing to do. */
export interface IdleWait {
  /**
   * For the pipeline, called as each outcome is durable: ends a wait for capacity once half of the batch
   * room is free. The same function every time (it runs once per delivery: it allocates nothing).
   */
  readonly onDurable: () => void;
  /** Resolves when delivered outcomes free room for a claim (with `onCapacity`), or after `ms`, or on {@link wake}. */
  idle(ms: number, onCapacity: boolean): Promise<void>;
  /** Ends the current wait, if any, at once. */
  wake(): void;
}

/** The room of a batch, and how many deliveries are claimed and not durable yet, for {@link createIdleWait}. */
export interface IdleWaitParts {
  readonly batchSize: number;
  /** Deliveries claimed whose outcome is not durable yet (the pipeline's `outstanding`). */
  readonly outstanding: () => number;
}

/** The idle wait of a claim loop; built before the pipeline, which calls its `onDurable`. */
export function createIdleWait({ batchSize, outstanding }: IdleWaitParts): IdleWait {
  const half = Math.ceil(batchSize / 2);
  let wake: (() => void) | undefined;
  let capacity: (() => void) | undefined;
  return {
    onDurable: () => capacity?.(),
    idle(ms, onCapacity) {
      return new Promise<void>((resolve) => {
        const timer = setTimeout(finish, ms);
        function finish() {
          clearTimeout(timer);
          wake = undefined;
          capacity = undefined;
          resolve();
        }
        wake = finish;
        if (onCapacity)
          capacity = () => {
            if (batchSize - outstanding() >= half) finish();
          };
      });
    },
    wake: () => wake?.(),
  };
}

/** What {@link createClaimLoop} runs: the worker's parts, its batches, its source slice and idle wait. */
export interface ClaimLoopParts extends WorkerParts {
  readonly batches: ClaimedBatches;
  /** Deliveries claimed whose outcome is not durable yet (the pipeline's `outstanding`). */
  readonly outstanding: () => number;
  /** Expands one source job for a slice (see `expandSourceSlice`); resolves to the jobs worked on. */
  readonly expandSources: () => Promise<number>;
  readonly waiter: IdleWait;
}

/** A worker's background loop (`worker.start()`). */
export interface ClaimLoop {
  /** Starts the loop, unless it runs. */
  start(): void;
  /** Stops claiming: ends the idle wait, and resolves once the current round has ended. */
  stop(): Promise<void>;
}

/**
 * The background loop: each round expands a source slice, then claims as many deliveries as the batch
 * has room for once half of it is free, so sending never waits for a whole batch to end. A round that
 * claimed less than its room idles until outcomes free room, or `pollMs` (deliveries coming due).
 */
export function createClaimLoop(parts: ClaimLoopParts): ClaimLoop {
  const { ctx, opts, batches, outstanding, expandSources, waiter } = parts;
  const half = Math.ceil(opts.batchSize / 2);
  let running = false;
  let loop: Promise<void> | undefined;

  async function runLoop(): Promise<void> {
    while (running) {
      let progressed = false;
      try {
        progressed = (await expandSources()) > 0;
        const room = opts.batchSize - outstanding();
        if (running && room >= half) {
          const batch = await batches.claim(room);
          if (batch) progressed = batch.count === room;
        }
      } catch (error) {
        // An outage is logged once by the engine, not at every round.
        if (!isStoreOutage(error)) ctx.logger.error({ err: error }, 'worker round failed');
      }
      if (!running) continue;
      if (progressed) {
        // The next round at once, but after a turn of the event loop: a round's store calls may all be
        // answered synchronously (SQLite), and back-to-back rounds would then never let a request in.
        await yieldToEventLoop();
        continue;
      }
      // Batches in flight: claim again as soon as they free room (or poll, for deliveries coming due).
      await waiter.idle(opts.pollMs, batches.inFlight.size > 0);
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
      waiter.wake();
      await loop;
      loop = undefined;
    },
  };
}
