import type { ClaimedDelivery, MailingStatus } from '../store/records.js';
import type { DeliveryEvents } from './delivery-events.js';
import type { WorkerParts } from './worker-parts.js';

/** Mailing statuses after which nothing more is sent. */
export const STOPPED: readonly MailingStatus[] = ['cancelled', 'failed'];

/** The mailings a worker moves on: to `sending` when it starts them, to `completed` once settled. */
export interface MailingSettler {
  /**
   * Completes the mailing if nothing of it is open any more (`Store.completeMailingIfSettled`); a
   * broadcast's completion writes its `broadcast.completed` event with it, and emits `broadcast:completed`.
   */
  settle(mailingId: string): Promise<void>;
  /**
   * After a batch: for each mailing of `claimed`, skips what waits again if it was cancelled meanwhile,
   * else moves it to `sending` (once per worker) and settles it.
   */
  settleBatch(claimed: readonly ClaimedDelivery[]): Promise<void>;
}

/** Mailings a worker remembers having moved to `sending`, at most (then it forgets them all). */
const STARTED_KEPT = 4096;

/** The settling of a worker's mailings (its `started` memory is the worker's own). */
export function createMailingSettler({ ctx, store, cache }: WorkerParts): MailingSettler {
  const { clock } = ctx;
  const events = ctx.events.view<DeliveryEvents>();
  // Mailings this worker already moved to `sending`: a mailing never goes back to `queued`.
  const started = new Set<string>();

  async function settle(mailingId: string): Promise<void> {
    const now = clock.now();
    const entry = await cache.get(mailingId);
    // A broadcast's completion is an event for the app, written with it; a single message's is not.
    const outbox =
      entry?.mailing.kind === 'broadcast'
        ? await ctx.outbox.forMailing('broadcast.completed', entry.mailing, now)
        : undefined;
    if (await store.completeMailingIfSettled(mailingId, now, outbox)) {
      if (entry) {
        const { projectId, ref, kind } = entry.mailing;
        events.emit('broadcast:completed', { projectId, ref, kind });
      }
    }
  }

  async function settleBatch(claimed: readonly ClaimedDelivery[]): Promise<void> {
    for (const id of new Set(claimed.map((d) => d.mailingId))) {
      // Deliveries of this batch that a cancel raced with (a retry written back, or handed back by
      // stop) are waiting again; the cancel's own settle ran before they were, so settle them now.
      const fresh = await store.getMailingById(id);
      if (fresh && STOPPED.includes(fresh.status)) {
        await store.settleOpenDeliveries(id, 'skipped', `broadcast ${fresh.status}`, clock.now());
        continue;
      }
      if (!started.has(id)) {
        await store.setMailingStatus(id, ['queued', 'scheduled'], 'sending', clock.now());
        if (started.size >= STARTED_KEPT) started.clear();
        started.add(id);
      }
      await settle(id);
    }
  }

  return { settle, settleBatch };
}
