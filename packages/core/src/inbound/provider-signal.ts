/**
 * Applying a provider's signal (an SES or Mailgun bounce, complaint or delivery, its signature already
 * verified): found by the message's Message-ID, checked against its recipient, classified like any bounce.
 */
import { bounceEffect, reasonGroup } from './bounce-reasons.js';
import { classifyReason } from './classify-reason.js';
import { deliveryByMessageId } from './find-delivery.js';
import type { InboundContext } from './inbound-context.js';
import { applySignal, type SignalFacts, signalKindOf } from './inbound-effects.js';
import { appliedReceipt, countedReceipt, deferredError, ignoredReceipt } from './inbound-receipts.js';
import type { InboundReceipt, ProviderSignal } from './inbound-types.js';

/** `mailroom.inbound.applyProviderSignal`: applies the signal and counts it (`inbound:message`). */
export async function applyCountedProviderSignal(
  ctx: InboundContext,
  signal: ProviderSignal,
): Promise<InboundReceipt> {
  try {
    return countedReceipt(ctx, signal.source, await applyProviderSignal(ctx, signal));
  } catch (error) {
    throw deferredError(ctx, { via: signal.source, report: 'notification', error });
  }
}

/** Applies the signal to the delivery its Message-ID names, if it names that delivery's recipient. */
async function applyProviderSignal(ctx: InboundContext, signal: ProviderSignal): Promise<InboundReceipt> {
  await ctx.ready();
  const { logger } = ctx;
  const log = { source: signal.source, messageId: signal.messageId };
  const delivery = await deliveryByMessageId(ctx, signal.messageId);
  if (!delivery) {
    return ignoredReceipt(logger, {
      report: 'notification',
      code: 'unknown-message',
      reason: 'names no delivery of this engine',
      log,
    });
  }
  if (delivery.address.toLowerCase() !== signal.address.toLowerCase()) {
    return ignoredReceipt(logger, {
      report: 'notification',
      code: 'other-recipient',
      reason: 'names another recipient than the delivery',
      log: { ...log, delivery: delivery.id },
    });
  }
  const facts = providerFacts(signal);
  if (!facts) {
    return ignoredReceipt(logger, {
      report: 'notification',
      code: 'not-a-bounce',
      reason: 'names no failure',
      log: { ...log, delivery: delivery.id },
    });
  }
  const effect = await applySignal(ctx, delivery, facts);
  return appliedReceipt('notification', [effect]);
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
