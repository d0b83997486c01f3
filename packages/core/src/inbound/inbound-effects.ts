/**
 * What an inbound signal changes: the core decides, the store applies it in one transaction
 * (`Store.applyInboundSignal`). Shared by inbound mail (DSN, ARF, text bounces), provider notifications
 * and the relay's refusals at send time, so that a bounce's reason has one effect wherever it was learnt
 * (the table of `bounce-reasons.ts`).
 */

import { domainOf } from '../base/address-parts.js';
import { MailroomError } from '../base/errors.js';
import { newId } from '../base/ids.js';
import { deliveryEventData } from '../events/event-outbox.js';
import type { BounceData, EventType } from '../store/event-records.js';
import type { InboundSignalWrite } from '../store/inbound-signal-store.js';
import type {
  DeliveryRecord,
  InboundSignalKind,
  InboundSignalSource,
  MailingRecord,
} from '../store/records.js';
import type { BounceReason } from './bounce-reasons.js';
import type { ReasonVerdict } from './classify-reason.js';
import type { InboundContext } from './inbound-context.js';
import type { InboundEvents } from './inbound-events.js';
import type { InboundEffect } from './inbound-types.js';
import {
  DEFAULT_MAILBOX_UNAVAILABLE,
  isRecipientSideSoft,
  type MailboxUnavailableRule,
  RECIPIENT_SIDE_SOFT_REASONS,
} from './mailbox-unavailable.js';

/** The event each kind of signal emits (a delivery report emits none). */
const EVENT_OF: Record<InboundSignalKind, EventType | undefined> = {
  'hard-bounce': 'email.bounced',
  'soft-bounce': 'email.bounced',
  'sender-side': 'email.bounced',
  complaint: 'email.complained',
  delivered: undefined,
};

/** The class an `email.bounced` event names for each bouncing kind. */
const CLASS_OF: Partial<Record<InboundSignalKind, BounceData['class']>> = {
  'hard-bounce': 'recipient-hard',
  'soft-bounce': 'soft',
  'sender-side': 'sender-side',
};

/** One signal about one delivery, as the core read it. */
export interface SignalFacts {
  kind: InboundSignalKind;
  source: InboundSignalSource;
  /** The reason of the taxonomy (`feedback` for a complaint, `delivered` for a delivery report). */
  reason: BounceReason;
  status: string | null;
  diagnostic: string | null;
  /**
   * False for a temporary failure (a 4.x.x, a delay notice): a sender-side one leaves the delivery `sent`.
   * @default true
   */
  final?: boolean;
  /** The recipient the report named, when it is not the delivery's address. */
  reportedAddress?: string | null;
  /** The returned copy's Message-ID, when it is not the delivery's. */
  reportedMessageId?: string | null;
  /** The key that makes a repeat a no-op. @default `<kind>:<delivery id>` */
  dedupeKey?: string;
}

/**
 * The signal kind of a classified bounce, from its effect: `suppress` is a hard bounce, `count-soft` a
 * soft one, `record-sender-side` a sender-side one; of the rest only a delivery report is a signal (an
 * auto-reply or a complaint report read as a bounce is none).
 */
export function signalKindOf(
  verdict: Pick<ReasonVerdict, 'effect' | 'reason'>,
): InboundSignalKind | undefined {
  switch (verdict.effect) {
    case 'suppress':
      return 'hard-bounce';
    case 'count-soft':
      return 'soft-bounce';
    case 'record-sender-side':
      return 'sender-side';
    case 'none':
      return verdict.reason === 'delivered' ? 'delivered' : undefined;
  }
}

/**
 * Apply `facts` to `delivery`; resolves with what changed. `INBOUND_DEFERRED` while the delivery's send
 * outcome is not recorded yet.
 */
export async function applySignal(
  ctx: InboundContext,
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
  const write = signalWrite(delivery, facts, softRules(ctx), now);
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
        ...(facts.kind === 'complaint' ? {} : { bounce: bounceData(facts) }),
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
    reason: facts.reason,
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
        reason: facts.reason,
        source: facts.source,
        status: facts.status,
        suppressed: result.suppressed,
      },
      'inbound signal applied',
    );
    ctx.events.view<InboundEvents>().emit('inbound', { ...effect, source: facts.source });
  }
  return effect;
}

/**
 * Record the relay's refusal of a delivery being sent (a 5xx reply at send time), by the same rules as a
 * bounce: a recipient-hard reason suppresses the address, a soft one counts towards the streak, a
 * sender-side one is only recorded. The delivery itself is left to the worker's outcome (`failed`), and
 * so is the `email.bounced` event ({@link refusalEventData}). Keyed by attempt: a repeat changes nothing.
 */
export async function recordRefusal(
  ctx: InboundContext,
  delivery: DeliveryRecord,
  facts: SignalFacts,
): Promise<{ suppressed: boolean }> {
  const now = ctx.clock.now();
  const write = signalWrite(
    delivery,
    { ...facts, dedupeKey: facts.dedupeKey ?? `${facts.kind}:${delivery.id}:${delivery.attempts}` },
    softRules(ctx),
    now,
  );
  delete write.delivery;
  const result = await ctx.store.applyInboundSignal(write);
  return { suppressed: result.suppressed };
}

/** The `data` of the `email.bounced` event of a refusal at send time (written with the failed outcome). */
export function refusalEventData(
  delivery: DeliveryRecord,
  mailing: Pick<MailingRecord, 'ref' | 'kind'>,
  facts: SignalFacts,
) {
  return { ...deliveryEventData(delivery, mailing), response: facts.diagnostic, bounce: bounceData(facts) };
}

/** The `bounce` member of an `email.bounced` event. */
export function bounceData(facts: SignalFacts): BounceData {
  return {
    reason: facts.reason,
    class: CLASS_OF[facts.kind] ?? 'soft',
    status: facts.status,
    diagnostic: facts.diagnostic,
    source: facts.source,
    ...(facts.reportedAddress ? { reported_address: facts.reportedAddress } : {}),
    ...(facts.reportedMessageId ? { reported_message_id: facts.reportedMessageId } : {}),
  };
}

/** The rules that turn soft bounces into a suppression. */
export interface SoftRules {
  /** Soft bounces in a row (`bounces.softBounceLimit`). */
  softBounceLimit: number;
  /** Recipient-side soft bounces over a window (`bounces.mailboxUnavailable`). */
  mailboxUnavailable: MailboxUnavailableRule;
}

/** The engine's soft rules, or the defaults when it has no `bounces` option (refusals at send time). */
function softRules(ctx: InboundContext): SoftRules {
  return {
    softBounceLimit: ctx.bounces?.softBounceLimit ?? 3,
    mailboxUnavailable: ctx.bounces?.mailboxUnavailable ?? DEFAULT_MAILBOX_UNAVAILABLE,
  };
}

/** The store write of one signal: the rules of the issue, as data. */
export function signalWrite(
  delivery: DeliveryRecord,
  facts: SignalFacts,
  rules: SoftRules,
  now: Date,
): InboundSignalWrite {
  const signal = {
    id: newId('sig', now.getTime()),
    projectId: delivery.projectId,
    mailingId: delivery.mailingId,
    deliveryId: delivery.id,
    address: delivery.address,
    domain: domainOf(delivery.address),
    kind: facts.kind,
    source: facts.source,
    reason: facts.reason,
    status: facts.status,
    diagnostic: facts.diagnostic,
    reportedAddress: facts.reportedAddress ?? null,
    reportedMessageId: facts.reportedMessageId ?? null,
    dedupeKey: facts.dedupeKey ?? `${facts.kind}:${delivery.id}`,
    createdAt: now,
  };
  const words = [facts.status, facts.diagnostic].filter(Boolean).join(' ');
  const said = `(${facts.reason}): ${words || facts.source}`;
  const suppression = (reason: 'hard-bounce' | 'soft-bounce' | 'mailbox-unavailable' | 'complaint') => ({
    projectId: delivery.projectId,
    address: delivery.address,
    reason,
    detail: `${facts.source} ${facts.reason}${words === '' ? '' : `: ${words}`}`.slice(0, 500),
    createdAt: now,
  });
  switch (facts.kind) {
    case 'hard-bounce':
      return {
        signal,
        delivery: { status: 'bounced', from: ['sent'], lastError: `hard bounce ${said}` },
        suppress: suppression('hard-bounce'),
        now,
      };
    case 'soft-bounce': {
      // The delivery stays sent (the MTA may still deliver it); the diagnostic is kept for the dashboard.
      const delivery = { status: 'sent', from: ['sent'], lastError: `soft bounce ${said}` } as const;
      if (isRecipientSideSoft(facts.reason)) {
        // A full mailbox or a suspended account counts over a window, apart from the streak: a delivery
        // in between (the mailbox was emptied, the account restored) starts it again.
        const { limit, windowMs } = rules.mailboxUnavailable;
        return {
          signal,
          delivery: { ...delivery, from: [...delivery.from] },
          mailboxUnavailable: {
            reasons: RECIPIENT_SIDE_SOFT_REASONS,
            since: new Date(now.getTime() - windowMs),
            suppressAt: limit,
            suppression: suppression('mailbox-unavailable'),
          },
          now,
        };
      }
      return {
        signal,
        delivery: { ...delivery, from: [...delivery.from] },
        softBounce: { suppressAt: rules.softBounceLimit, suppression: suppression('soft-bounce') },
        now,
      };
    }
    case 'sender-side':
      // The message did not arrive, but the address is not at fault: never suppressed, and the soft
      // streak is left as it is (the recipient's mailbox said nothing about itself).
      return {
        signal,
        delivery:
          facts.final === false
            ? { status: 'sent', from: ['sent'], lastError: `sender-side refusal ${said}` }
            : { status: 'bounced', from: ['sent'], lastError: `sender-side bounce ${said}` },
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
