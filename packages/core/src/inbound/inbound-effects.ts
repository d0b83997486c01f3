/**
 * What an inbound signal changes: the core decides, the store applies it in one transaction
 * (`Store.applyInboundSignal`). Shared by inbound mail (DSN, ARF, text bounces) and provider notifications.
 */

import { MailroomError } from '../base/errors.js';
import { newId } from '../base/ids.js';
import type { EngineContext } from '../engine/engine-context.js';
import { deliveryEventData } from '../events/event-outbox.js';
import type { EventType } from '../store/event-records.js';
import type { InboundSignalWrite } from '../store/inbound-signal-store.js';
import type { DeliveryRecord, InboundSignalKind, InboundSignalSource } from '../store/records.js';
import type { InboundEffect } from './inbound-types.js';

/** The event each kind of signal emits (a delivery report emits none). */
const EVENT_OF: Record<InboundSignalKind, EventType | undefined> = {
  'hard-bounce': 'email.bounced',
  'soft-bounce': 'email.bounced',
  complaint: 'email.complained',
  delivered: undefined,
};

/** One signal about one delivery, as the core read it. */
export interface SignalFacts {
  kind: InboundSignalKind;
  source: InboundSignalSource;
  status: string | null;
  diagnostic: string | null;
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
  const mailing = await ctx.store.getMailingById(delivery.mailingId);
  const write = signalWrite(delivery, facts, ctx.bounces?.softBounceLimit ?? 3, now);
  const type = EVENT_OF[facts.kind];
  if (type) {
    // The event commits with the change, or not at all (a repeated signal writes neither).
    write.outbox = await ctx.outbox.event(
      delivery.projectId,
      type,
      now,
      { mailingRef: mailing?.ref ?? null, deliveryId: delivery.id, address: delivery.address },
      {
        ...deliveryEventData(delivery, mailing),
        response: facts.diagnostic,
        ...(facts.kind === 'complaint'
          ? {}
          : {
              bounce: {
                class: facts.kind === 'hard-bounce' ? ('hard' as const) : ('soft' as const),
                diagnostic: [facts.status, facts.diagnostic].filter(Boolean).join(' ') || null,
              },
            }),
      },
    );
  }
  const result = await ctx.store.applyInboundSignal(write);
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
    dedupeKey: `${facts.kind}:${delivery.id}`,
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
