/**
 * What an inbound signal changes: the core decides, the store applies it in one transaction
 * (`Store.applyInboundSignal`). Shared by inbound mail (DSN, ARF, text bounces) and provider notifications.
 */
import type { EngineContext } from '../engine-context.js';
import { MailroomError } from '../errors.js';
import { newId } from '../ids.js';
import type { DeliveryRecord, InboundSignalKind, InboundSignalSource } from '../records.js';
import type { InboundSignalWrite } from '../store/inbound-signal-store.js';
import type { InboundEffect } from './inbound-types.js';

/** One signal about one delivery, as the core read it. */
export interface SignalFacts {
  kind: InboundSignalKind;
  source: InboundSignalSource;
  status: string | null;
  diagnostic: string | null;
  /** Narrows the dedupe key (a provider's event id); by default one signal of a kind per delivery. */
  dedupeSuffix?: string;
}

/**
 * Apply `facts` to `delivery`; resolves with what changed. `INBOUND_DEFERRED` while the delivery's send
 * outcome is not recorded yet.
 */
export async function applySignal(
  ctx: EngineContext,
  delivery: DeliveryRecord,
  facts: SignalFacts,
): Promise<InboundEffect> {
  if (delivery.status === 'queued' || delivery.status === 'sending') {
    // A report can outrun the worker's record of the send (a relay that bounces at once): applied now, the
    // status change would find no `sent` delivery and the signal would be spent. The MTA (451) or the
    // provider (503) retries later, by when the outcome is written.
    throw new MailroomError('INBOUND_DEFERRED', `Delivery ${delivery.id} has no recorded outcome yet`);
  }
  const now = ctx.clock.now();
  const write = signalWrite(delivery, facts, ctx.bounces?.softBounceLimit ?? 3, now);
  // Seam for the event outbox (issue "Delivery events and signed webhooks"): the email.bounced /
  // email.complained event row goes into `write` here, so that it commits with the change.
  const result = await ctx.store.applyInboundSignal(write);
  const mailing = await ctx.store.getMailingById(delivery.mailingId);
  const effect: InboundEffect = {
    projectId: delivery.projectId,
    mailingRef: mailing?.ref ?? '',
    mailingKind: mailing?.kind ?? 'message',
    deliveryId: delivery.id,
    address: delivery.address,
    signal: facts.kind,
    status: facts.status,
    diagnostic: facts.diagnostic,
    applied: result.applied,
    deliveryChanged: result.deliveryChanged,
    suppressed: result.suppressed,
  };
  if (result.applied) {
    ctx.logger.info(
      {
        projectId: delivery.projectId,
        delivery: delivery.id,
        signal: facts.kind,
        source: facts.source,
        status: facts.status,
        suppressed: result.suppressed,
      },
      'inbound signal applied',
    );
    ctx.events.emit('inbound', { ...effect, source: facts.source });
  }
  return effect;
}

/** The store write of one signal: the rules of the issue, as data. */
export function signalWrite(
  delivery: DeliveryRecord,
  facts: SignalFacts,
  softBounceLimit: number,
  now: Date,
): InboundSignalWrite {
  const signal = {
    id: newId('sig', now.getTime()),
    projectId: delivery.projectId,
    deliveryId: delivery.id,
    address: delivery.address,
    kind: facts.kind,
    source: facts.source,
    status: facts.status,
    diagnostic: facts.diagnostic,
    dedupeKey: `${facts.kind}:${delivery.id}${facts.dedupeSuffix ? `:${facts.dedupeSuffix}` : ''}`,
    createdAt: now,
  };
  const words = [facts.status, facts.diagnostic].filter(Boolean).join(' ');
  const suppression = (reason: 'hard-bounce' | 'soft-bounce' | 'complaint') => ({
    projectId: delivery.projectId,
    address: delivery.address,
    reason,
    detail: words === '' ? facts.source : `${facts.source}: ${words}`.slice(0, 500),
    createdAt: now,
  });
  switch (facts.kind) {
    case 'hard-bounce':
      return {
        signal,
        delivery: { status: 'bounced', from: ['sent'], lastError: `hard bounce: ${words || facts.source}` },
        suppress: suppression('hard-bounce'),
        now,
      };
    case 'soft-bounce':
      return {
        signal,
        // The delivery stays sent (the MTA may still deliver it); the diagnostic is kept for the dashboard.
        delivery: { status: 'sent', from: ['sent'], lastError: `soft bounce: ${words || facts.source}` },
        softBounce: { suppressAt: softBounceLimit, suppression: suppression('soft-bounce') },
        now,
      };
    case 'complaint':
      return {
        signal,
        delivery: {
          status: 'complained',
          from: ['sent', 'bounced'],
          lastError: `complaint: ${words || facts.source}`,
        },
        suppress: suppression('complaint'),
        unsubscribe: true,
        now,
      };
    case 'delivered':
      return { signal, resetSoftBounces: true, now };
  }
}
