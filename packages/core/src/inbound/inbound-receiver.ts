/**
 * `mailroom.inbound`: takes inbound mail and provider notifications, finds the delivery they are about
 * through something the engine can verify (a VERP token's MAC, a provider's signature checked by the
 * caller, an unguessable Message-ID for complaints), checks that the report agrees with that delivery, and
 * applies the signal (docs/architecture.md, invariant 11: nothing is trusted by its look).
 */

import { isMailroomError } from '../base/errors.js';
import type { DeliveryRecord, InboundSignalSource } from '../store/records.js';
import { bounceEffect, reasonGroup } from './bounce-reasons.js';
import { classifyReason, classifyRecipient } from './classify-reason.js';
import type { InboundContext } from './inbound-context.js';
import { applySignal, type SignalFacts, signalKindOf } from './inbound-effects.js';
import type { InboundEvents } from './inbound-events.js';
import type { BounceRecipient, InboundReport } from './inbound-report.js';
import type {
  InboundEffect,
  InboundEnvelope,
  InboundIgnoreCode,
  InboundMessageEvent,
  InboundReceipt,
  MailroomInbound,
  ProviderSignal,
} from './inbound-types.js';
import { parseInboundMessage } from './parse-inbound.js';
import { createNotifications, type NotificationOptions } from './provider-notifications.js';

/** Largest inbound message read; the SMTP listener refuses larger ones at MAIL FROM or DATA. */
export const MAX_INBOUND_BYTES = 10 * 1024 * 1024;

/** The delivery a report is about, or why none is. */
type Found = { delivery: DeliveryRecord } | { code: InboundIgnoreCode; reason: string };

/** The engine's `inbound` member. */
export function createInbound(ctx: InboundContext, notifications: NotificationOptions = {}): MailroomInbound {
  const { logger } = ctx;
  const domain = ctx.bounces?.domain;

  const ignored = (
    report: InboundReceipt['report'],
    code: InboundIgnoreCode,
    reason: string,
    log: Record<string, unknown>,
  ): InboundReceipt => {
    logger.warn({ ...log, report, reason, code }, 'inbound message ignored');
    return { outcome: 'ignored', report, reason, code, effects: [] };
  };

  const counted = (via: InboundMessageEvent['via'], receipt: InboundReceipt): InboundReceipt => {
    ctx.events.view<InboundEvents>().emit('inbound:message', {
      via,
      report: receipt.report,
      outcome: receipt.outcome,
      code: receipt.code ?? null,
    });
    return receipt;
  };

  /** The delivery named by a valid token among `addresses`, or why there is none. */
  async function byToken(
    addresses: readonly (string | null | undefined)[],
  ): Promise<DeliveryRecord | 'forged' | undefined> {
    if (!ctx.bounces) return undefined;
    let forged = false;
    for (const address of addresses) {
      if (!address) continue;
      const id = await ctx.bounces.deliveryOf(address);
      if (id === undefined) {
        forged ||= isAtDomain(address) && address.toLowerCase().startsWith('b+');
        continue;
      }
      const delivery = await ctx.store.getDelivery(id);
      if (delivery) return delivery;
    }
    return forged ? 'forged' : undefined;
  }

  /** The delivery whose Message-ID is exactly `messageId` (the id is its local part). */
  async function byMessageId(messageId: string | null): Promise<DeliveryRecord | undefined> {
    if (!messageId) return undefined;
    const bracketed = messageId.startsWith('<') ? messageId : `<${messageId}>`;
    const m = /^<([a-z0-9_]{1,64})@[^<>@\s]+>$/.exec(bracketed);
    if (!m) return undefined;
    const delivery = await ctx.store.getDelivery(m[1] as string);
    return delivery?.messageId === bracketed ? delivery : undefined;
  }

  /**
   * Whether a report whose token names `delivery` may apply to it, given the Message-ID of its returned
   * copy: the token is authoritative (a forwarder or a list changes the Message-ID, an MTA may return
   * no copy), unless that Message-ID names another delivery of this engine: then the two verifiable
   * names disagree and neither is trusted.
   */
  async function agrees(delivery: DeliveryRecord, messageId: string | null): Promise<Found> {
    if (!messageId || messageId === delivery.messageId) return { delivery };
    const named = await byMessageId(messageId);
    if (!named) return { delivery };
    return named.projectId === delivery.projectId
      ? { code: 'other-delivery', reason: 'the report names another message than its return path' }
      : {
          code: 'other-project',
          reason: "the report names another project's message than its return path",
        };
  }

  function isAtDomain(address: string): boolean {
    return domain !== undefined && address.toLowerCase().endsWith(`@${domain}`);
  }

  function receipt(report: InboundReceipt['report'], effects: InboundEffect[]): InboundReceipt {
    return { outcome: effects.some((e) => e.applied) ? 'applied' : 'duplicate', report, effects };
  }

  async function onBounce(
    report: Extract<InboundReport, { type: 'bounce' }>,
    envelope: InboundEnvelope,
    log: Record<string, unknown>,
  ): Promise<InboundReceipt> {
    const found = await byToken(envelope.envelopeTo);
    if (found === 'forged')
      return ignored('bounce', 'forged-token', 'forged or edited return-path token', log);
    if (!found) return ignored('bounce', 'no-token', 'no valid return-path token', log);
    const checked = await agrees(found, report.originalMessageId);
    if (!('delivery' in checked)) {
      return ignored('bounce', checked.code, checked.reason, { ...log, delivery: found.id });
    }
    const delivery = checked.delivery;
    const recipient = recipientFor(report.recipients, delivery.address);
    if (!recipient) return ignored('bounce', 'not-a-bounce', 'the report names no recipient', log);
    const verdict = classifyRecipient(recipient, report.mta);
    const kind = signalKindOf(verdict);
    if (!kind) {
      return ignored('bounce', 'not-a-bounce', `the report is no bounce (${verdict.reason})`, {
        ...log,
        delivery: delivery.id,
      });
    }
    const reported = recipient.address ?? recipient.originalAddress;
    const source: InboundSignalSource = report.format === 'dsn' ? 'dsn' : 'text-bounce';
    const effect = await applySignal(ctx, delivery, {
      kind,
      source,
      reason: verdict.reason,
      status: recipient.status,
      diagnostic: recipient.diagnostic,
      final: verdict.final,
      reportedAddress:
        reported && reported.toLowerCase() !== delivery.address.toLowerCase() ? reported : null,
      reportedMessageId:
        report.originalMessageId && report.originalMessageId !== delivery.messageId
          ? report.originalMessageId
          : null,
    });
    return receipt('bounce', [effect]);
  }

  async function onComplaint(
    report: Extract<InboundReport, { type: 'complaint' }>,
    envelope: InboundEnvelope,
    log: Record<string, unknown>,
  ): Promise<InboundReceipt> {
    const found = await byToken([...envelope.envelopeTo, report.originalMailFrom]);
    if (found === 'forged') {
      return ignored('complaint', 'forged-token', 'forged or edited return-path token', log);
    }
    let delivery: DeliveryRecord | undefined;
    if (found) {
      const checked = await agrees(found, report.originalMessageId);
      if (!('delivery' in checked)) {
        return ignored('complaint', checked.code, checked.reason, { ...log, delivery: found.id });
      }
      delivery = checked.delivery;
    } else {
      // Without a token only the unguessable Message-ID, which only the recipient saw, names it.
      delivery = await byMessageId(report.originalMessageId);
    }
    if (!delivery) return ignored('complaint', 'no-token', 'names no delivery of this engine', log);
    const effect = await applySignal(ctx, delivery, {
      kind: 'complaint',
      source: 'arf',
      reason: 'feedback',
      status: null,
      diagnostic: `feedback-type ${report.feedbackType}`,
    });
    return receipt('complaint', [effect]);
  }

  async function applyProviderSignal(signal: ProviderSignal): Promise<InboundReceipt> {
    await ctx.ready();
    const log = { source: signal.source, messageId: signal.messageId };
    const delivery = await byMessageId(signal.messageId);
    if (!delivery) {
      return ignored('notification', 'unknown-message', 'names no delivery of this engine', log);
    }
    if (delivery.address.toLowerCase() !== signal.address.toLowerCase()) {
      return ignored('notification', 'other-recipient', 'names another recipient than the delivery', {
        ...log,
        delivery: delivery.id,
      });
    }
    const facts = providerFacts(signal);
    if (!facts) {
      return ignored('notification', 'not-a-bounce', 'names no failure', { ...log, delivery: delivery.id });
    }
    const effect = await applySignal(ctx, delivery, facts);
    return receipt('notification', [effect]);
  }

  /** Emits `inbound:message` for a deferral; returns the error to rethrow. */
  const deferred = (via: InboundMessageEvent['via'], report: InboundReceipt['report'], error: unknown) => {
    ctx.events.view<InboundEvents>().emit('inbound:message', {
      via,
      report,
      outcome: 'deferred',
      code: isMailroomError(error, 'INBOUND_DEFERRED') ? 'not-sent-yet' : 'store-failed',
    });
    return error;
  };

  async function countedSignal(signal: ProviderSignal): Promise<InboundReceipt> {
    try {
      return counted(signal.source, await applyProviderSignal(signal));
    } catch (error) {
      throw deferred(signal.source, 'notification', error);
    }
  }

  const notify = createNotifications(ctx, notifications, countedSignal);

  async function receive(raw: Uint8Array, envelope: InboundEnvelope): Promise<InboundReceipt> {
    await ctx.ready();
    const log = {
      envelopeTo: envelope.envelopeTo.slice(0, 5),
      remoteAddress: envelope.remoteAddress,
      bytes: raw.byteLength,
    };
    if (!ctx.bounces) {
      const reason =
        "the engine has no bounce domain (createMailroom({ bounces: { domain: 'bounces.example.test' } }))";
      return ignored('unrecognised', 'disabled', reason, log);
    }
    if (raw.byteLength > MAX_INBOUND_BYTES) {
      return ignored('unrecognised', 'too-large', 'message too large', log);
    }
    let report: InboundReport;
    try {
      report = await parseInboundMessage(raw);
    } catch (error) {
      logger.warn({ ...log, err: error }, 'inbound message could not be parsed');
      return {
        outcome: 'ignored',
        report: 'unrecognised',
        reason: 'unreadable MIME',
        code: 'unreadable',
        effects: [],
      };
    }
    try {
      switch (report.type) {
        case 'bounce':
          return await onBounce(report, envelope, log);
        case 'complaint':
          return await onComplaint(report, envelope, log);
        case 'auto-reply':
          logger.info({ ...log, reason: report.reason }, 'inbound auto-reply ignored');
          return {
            outcome: 'ignored',
            report: 'auto-reply',
            reason: report.reason,
            code: 'auto-reply',
            effects: [],
          };
        default:
          return ignored('unrecognised', 'unrecognised', report.reason, log);
      }
    } catch (error) {
      if (!isMailroomError(error, 'INBOUND_DEFERRED')) {
        logger.error({ ...log, err: error }, 'inbound message could not be applied');
      }
      throw deferred('smtp', report.type, error);
    }
  }

  return {
    enabled: ctx.bounces !== undefined,
    domain,

    acceptsRecipient(address) {
      return isAtDomain(address) && address.length <= 320;
    },

    async recipientVerdict(address) {
      if (!(isAtDomain(address) && address.length <= 320) || !ctx.bounces) return 'outside';
      if (!address.toLowerCase().startsWith('b+')) return 'accept';
      // The MAC alone decides (verp-token.ts): a forged token costs one HMAC, never a store read.
      return (await ctx.bounces.deliveryOf(address)) === undefined ? 'forged' : 'accept';
    },

    async receive(raw, envelope) {
      return counted('smtp', await receive(raw, envelope));
    },

    applyProviderSignal: countedSignal,

    async notification(provider, body) {
      await ctx.ready();
      // Each signal of a notification is counted as it is applied; one that holds none is counted here.
      const result = await notify(provider, body);
      if (result.outcome === 'ignored' && result.code === undefined) {
        return counted(provider, { ...result, code: 'not-a-bounce' });
      }
      return result;
    },

    refused(code, envelope) {
      if (code === 'too-large' || code === 'rate-limited') {
        logger.warn(
          { envelopeTo: envelope.envelopeTo?.slice(0, 5), remoteAddress: envelope.remoteAddress, code },
          code === 'too-large'
            ? 'inbound message over the size cap refused'
            : 'inbound message deferred: rate limit',
        );
      }
      ctx.events.view<InboundEvents>().emit('inbound:message', {
        via: 'smtp',
        report: 'unrecognised',
        outcome: code === 'rate-limited' ? 'deferred' : 'ignored',
        code,
      });
    },
  };
}

/** The facts of a provider's signal: a bounce is classified as any bounce, the provider's word as a hint. */
function providerFacts(signal: ProviderSignal): SignalFacts | undefined {
  const base = {
    source: signal.source,
    status: signal.status ?? null,
    diagnostic: signal.diagnostic ?? null,
  };
  if (signal.kind === 'complaint') return { ...base, kind: 'complaint', reason: 'feedback' };
  if (signal.kind === 'delivered') return { ...base, kind: 'delivered', reason: 'delivered' };
  const verdict = classifyReason({ status: signal.status ?? null, diagnostic: signal.diagnostic ?? null });
  const vague = verdict.reason === 'onhold' || verdict.reason === 'undefined';
  const reason = vague && signal.reason ? signal.reason : verdict.reason;
  // A provider's transient bounce is not final, whatever the code it quotes.
  const final = signal.kind === 'soft-bounce' ? false : verdict.final;
  const kind = signalKindOf({ reason, effect: bounceEffect(reason, { final }) });
  if (!kind || reasonGroup(reason) === 'not-a-bounce') {
    return reason === 'delivered' ? { ...base, kind: 'delivered', reason } : undefined;
  }
  return { ...base, kind, reason, final };
}

/**
 * The report's block about `address`: by Final- or Original-Recipient; otherwise the first that failed
 * (or was delayed), else the first. The return path names one delivery, so a block naming another
 * address is about it under another name (a forward, an alias): recorded, not a reason to drop.
 */
function recipientFor(recipients: readonly BounceRecipient[], address: string): BounceRecipient | undefined {
  const wanted = address.toLowerCase();
  const match = recipients.find(
    (r) => r.address?.toLowerCase() === wanted || r.originalAddress?.toLowerCase() === wanted,
  );
  if (match) return match;
  return recipients.find((r) => r.action === 'failed' || r.action === 'delayed') ?? recipients[0];
}
