import { MailroomError } from '../base/errors.js';
import type { BaseContext } from '../context/base-context.js';
import type { ReceivingStore, RetentionStore } from '../store/store.js';
import type { RetentionOptions } from './retention-options.js';

/** Rows changed per store call of a sweep: small enough that no call holds locks for long. */
const SWEEP_CHUNK = 1_000;
const DAY_MS = 86_400_000;
/** The default of `RetentionOptions.eventDays`. */
export const EVENT_DAYS_DEFAULT = 30;

/** The retention sweeps of an engine. Internal. */
export interface Retention {
  /** Clear kept content written before a cutoff (see `Mailroom.pruneContent`); returns how many. */
  pruneContent(options?: { before?: Date; olderThanDays?: number }): Promise<number>;
  /** Start sweeping every `sweepEveryMs` (the first sweep right away). */
  start(): void;
  /** Stop sweeping; resolves when a sweep under way has finished. */
  stop(): Promise<void>;
}

/**
 * Keeps the store from growing without bound: a running worker periodically clears rendered content older
 * than `contentDays` (when set), deletes events and settled webhook messages and attempts older than
 * `eventDays` (30 by default), expired idempotency keys and received mail past its retention (issue 40),
 * a chunk at a time.
 */
export function createRetention(ctx: BaseContext, options: RetentionOptions = {}): Retention {
  const { clock, logger } = ctx;
  const store: RetentionStore & Pick<ReceivingStore, 'pruneReceivedMessages'> = ctx.store;
  const { contentDays, eventDays = EVENT_DAYS_DEFAULT } = options;
  if (contentDays !== undefined && !(Number.isFinite(contentDays) && contentDays > 0)) {
    throw new MailroomError('VALIDATION_FAILED', 'retention.contentDays must be a positive number of days');
  }
  if (!(eventDays > 0)) {
    throw new MailroomError(
      'VALIDATION_FAILED',
      'retention.eventDays must be a positive number of days (Infinity keeps events)',
    );
  }
  const everyMs = options.sweepEveryMs ?? 3_600_000;
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> | undefined;

  async function pruneContent(opts: { before?: Date; olderThanDays?: number } = {}): Promise<number> {
    await ctx.ready();
    const days = opts.olderThanDays ?? contentDays;
    let before = opts.before;
    if (before === undefined) {
      if (days === undefined || !(Number.isFinite(days) && days >= 0)) {
        throw new MailroomError(
          'VALIDATION_FAILED',
          'pruneContent needs `before`, `olderThanDays` (>= 0) or the retention.contentDays option',
        );
      }
      before = new Date(clock.now().getTime() - days * DAY_MS);
    }
    return drainInChunks((limit) => store.pruneDeliveryContent(before, limit));
  }

  async function sweep(): Promise<void> {
    try {
      const content = contentDays === undefined ? 0 : await pruneContent();
      const keys = await drainInChunks((limit) => store.pruneIdempotent(clock.now(), limit));
      const eventsBefore = new Date(clock.now().getTime() - eventDays * DAY_MS);
      const events = Number.isFinite(eventDays)
        ? await drainInChunks((limit) => store.pruneEvents(eventsBefore, limit))
        : 0;
      // Received mail carries its own expiry (the project's retention when it arrived).
      const received = await drainInChunks((limit) => store.pruneReceivedMessages(clock.now(), limit));
      if (content > 0 || keys > 0 || events > 0 || received > 0) {
        logger.info(
          { content, idempotencyKeys: keys, eventRows: events, receivedMessages: received },
          'retention sweep',
        );
      }
    } catch (error) {
      logger.warn({ err: error }, 'retention sweep failed; the next one tries again');
    }
  }

  const run = () => {
    sweeping ??= sweep().finally(() => {
      sweeping = undefined;
    });
  };

  return {
    pruneContent,
    start() {
      if (timer) return;
      run();
      timer = setInterval(run, everyMs);
      // A sweep is housekeeping: it never keeps the process alive.
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      timer = undefined;
      await sweeping;
    },
  };
}

async function drainInChunks(step: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await step(SWEEP_CHUNK);
    total += n;
    if (n < SWEEP_CHUNK) return total;
  }
}
