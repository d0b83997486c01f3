/**
 * `mailroom.inbound`: takes inbound mail and provider notifications, finds the delivery they are about
 * through something the engine can verify (a VERP token's MAC, a provider's signature checked by the
 * caller, an unguessable Message-ID for complaints), checks that the report agrees with that delivery, and
 * applies the signal (docs/architecture.md, invariant 11: nothing is trusted by its look).
 */

import { isMailroomError } from '../base/errors.js';
import type { EngineContext } from '../engine/engine-context.js';
import type { DeliveryRecord, InboundSignalKind, InboundSignalSource } from '../store/records.js';
import { applySignal } from './inbound-effects.js';
import type { BounceRecipient, InboundReport } from './inbound-report.js';
import type {
  InboundEffect,
  InboundEnvelope,
  InboundReceipt,
  MailroomInbound,
  ProviderSignal,
} from './inbound-types.js';
import { parseInboundMessage } from './parse-inbound.js';
import { createNotifications, type NotificationOptions } from './provider-notifications.js';

/** Largest inbound message read; the SMTP listener refuses larger ones at DATA. */
export const MAX_INBOUND_BYTES = 10 * 1024 * 1024;

/** The engine's `inbound` member. */
export function createInbound(ctx: EngineContext, notifications: NotificationOptions = {}): MailroomInbound {
  const { logger } = ctx;
  const domain = ctx.bounces?.domain;

  const ignored = (report: InboundReceipt['report'], reason: string, log: Record<string, unknown>) => {
    logger.warn({ ...log, report, reason }, 'inbound message ignored');
    return { outcome: 'ignored', report, reason, effects: [] } satisfies InboundReceipt;
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
    if (found === 'forged') return ignored('bounce', 'forged or edited return-path token', log);
    if (!found) return ignored('bounce', 'no valid return-path token', log);
    const delivery = found;
    if (report.originalMessageId && report.originalMessageId !== delivery.messageId) {
      // The token names one delivery, the report another (of this project or another): trust neither.
      return ignored('bounce', 'the report names another message than its return path', {
        ...log,
        delivery: delivery.id,
      });
    }
    const recipient = recipientFor(report.recipients, delivery.address);
    if (!recipient) {
      return ignored('bounce', 'the report names other recipients than the delivery', {
        ...log,
        delivery: delivery.id,
      });
    }
    const kind: InboundSignalKind =
      recipient.class === 'hard' ? 'hard-bounce' : recipient.class === 'soft' ? 'soft-bounce' : 'delivered';
    const source: InboundSignalSource = report.format === 'dsn' ? 'dsn' : 'text-bounce';
    const effect = await applySignal(ctx, delivery, {
      kind,
      source,
      status: recipient.status,
      diagnostic: recipient.diagnostic,
    });
    return receipt('bounce', [effect]);
  }

  async function onComplaint(
    report: Extract<InboundReport, { type: 'complaint' }>,
    envelope: InboundEnvelope,
    log: Record<string, unknown>,
  ): Promise<InboundReceipt> {
    const found = await byToken([...envelope.envelopeTo, report.originalMailFrom]);
    if (found === 'forged') return ignored('complaint', 'forged or edited return-path token', log);
    const byId = await byMessageId(report.originalMessageId);
    if (found && byId && found.id !== byId.id) {
      return ignored('complaint', 'the report names another message than its return path', {
        ...log,
        delivery: found.id,
      });
    }
    const delivery = found ?? byId;
    if (!delivery) return ignored('complaint', 'names no delivery of this engine', log);
    if (found && report.originalMessageId && report.originalMessageId !== delivery.messageId) {
      return ignored('complaint', 'the report names another message than its return path', {
        ...log,
        delivery: delivery.id,
      });
    }
    const effect = await applySignal(ctx, delivery, {
      kind: 'complaint',
      source: 'arf',
      status: null,
      diagnostic: `feedback-type ${report.feedbackType}`,
    });
    return receipt('complaint', [effect]);
  }

  async function applyProviderSignal(signal: ProviderSignal): Promise<InboundReceipt> {
    await ctx.ready();
    const log = { source: signal.source, messageId: signal.messageId };
    const delivery = await byMessageId(signal.messageId);
    if (!delivery) return ignored('notification', 'names no delivery of this engine', log);
    if (delivery.address.toLowerCase() !== signal.address.toLowerCase()) {
      return ignored('notification', 'names another recipient than the delivery', {
        ...log,
        delivery: delivery.id,
      });
    }
    const effect = await applySignal(ctx, delivery, {
      kind: signal.kind,
      source: signal.source,
      status: signal.status ?? null,
      diagnostic: signal.diagnostic ?? null,
    });
    return receipt('notification', [effect]);
  }

  const notify = createNotifications(ctx, notifications, applyProviderSignal);

  return {
    enabled: ctx.bounces !== undefined,
    domain,

    acceptsRecipient(address) {
      return isAtDomain(address) && address.length <= 320;
    },

    async receive(raw, envelope) {
      await ctx.ready();
      const log = {
        envelopeTo: envelope.envelopeTo.slice(0, 5),
        remoteAddress: envelope.remoteAddress,
        bytes: raw.byteLength,
      };
      if (!ctx.bounces) {
        const reason =
          "the engine has no bounce domain (createMailroom({ bounces: { domain: 'bounces.example.test' } }))";
        return ignored('unrecognised', reason, log);
      }
      if (raw.byteLength > MAX_INBOUND_BYTES) return ignored('unrecognised', 'message too large', log);
      let report: InboundReport;
      try {
        report = await parseInboundMessage(raw);
      } catch (error) {
        logger.warn({ ...log, err: error }, 'inbound message could not be parsed');
        return { outcome: 'ignored', report: 'unrecognised', reason: 'unreadable MIME', effects: [] };
      }
      try {
        switch (report.type) {
          case 'bounce':
            return await onBounce(report, envelope, log);
          case 'complaint':
            return await onComplaint(report, envelope, log);
          case 'auto-reply':
            logger.info({ ...log, reason: report.reason }, 'inbound auto-reply ignored');
            return { outcome: 'ignored', report: 'auto-reply', reason: report.reason, effects: [] };
          default:
            return ignored('unrecognised', report.reason, log);
        }
      } catch (error) {
        if (!isMailroomError(error, 'INBOUND_DEFERRED')) {
          logger.error({ ...log, err: error }, 'inbound message could not be applied');
        }
        throw error;
      }
    },

    applyProviderSignal,

    async notification(provider, body) {
      await ctx.ready();
      return notify(provider, body);
    },
  };
}

/**
 * The report's block about `address`: by Final- or Original-Recipient; a single block otherwise (the
 * message was forwarded and bounced under another address). Several blocks, none of them ours: none.
 */
function recipientFor(recipients: readonly BounceRecipient[], address: string): BounceRecipient | undefined {
  const wanted = address.toLowerCase();
  const match = recipients.find(
    (r) => r.address?.toLowerCase() === wanted || r.originalAddress?.toLowerCase() === wanted,
  );
  if (match) return match;
  return recipients.length === 1 ? recipients[0] : undefined;
}
