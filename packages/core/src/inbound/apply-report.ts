/**
 * Applying a parsed bounce or complaint report (DSN, plain-text bounce, ARF) to the delivery its return
 * path (or, for a complaint, its Message-ID) names, once that delivery is found and agrees.
 */
import type { DeliveryRecord, InboundSignalSource } from '../store/records.js';
import { classifyRecipient } from './classify-reason.js';
import { deliveryByMessageId, deliveryByToken, tokenAgrees } from './find-delivery.js';
import type { InboundContext } from './inbound-context.js';
import { applySignal, signalKindOf } from './inbound-effects.js';
import { appliedReceipt, ignoredReceipt } from './inbound-receipts.js';
import type { BounceRecipient, InboundReport } from './inbound-report.js';
import type { InboundEnvelope, InboundReceipt } from './inbound-types.js';

/** One parsed report to apply, with what came with it. */
export interface ReportToApply<R extends InboundReport> {
  readonly ctx: InboundContext;
  readonly report: R;
  readonly envelope: InboundEnvelope;
  /** What the log lines say of the message (its envelope, its size). */
  readonly log: Record<string, unknown>;
}

/**
 * A bounce: applied to the delivery its return-path token names, if the returned copy's Message-ID does
 * not name another one, as the signal its recipient's block is (classified once, `classifyRecipient`).
 */
export async function applyBounceReport({
  ctx,
  report,
  envelope,
  log,
}: ReportToApply<Extract<InboundReport, { type: 'bounce' }>>): Promise<InboundReceipt> {
  const { logger } = ctx;
  const found = await deliveryByToken(ctx, envelope.envelopeTo);
  if (found === 'forged') {
    return ignoredReceipt(logger, {
      report: 'bounce',
      code: 'forged-token',
      reason: 'forged or edited return-path token',
      log,
    });
  }
  if (!found) {
    return ignoredReceipt(logger, {
      report: 'bounce',
      code: 'no-token',
      reason: 'no valid return-path token',
      log,
    });
  }
  const checked = await tokenAgrees(ctx, found, report.originalMessageId);
  if (!('delivery' in checked)) {
    return ignoredReceipt(logger, {
      report: 'bounce',
      code: checked.code,
      reason: checked.reason,
      log: { ...log, delivery: found.id },
    });
  }
  const delivery = checked.delivery;
  const recipient = recipientFor(report.recipients, delivery.address);
  if (!recipient) {
    return ignoredReceipt(logger, {
      report: 'bounce',
      code: 'not-a-bounce',
      reason: 'the report names no recipient',
      log,
    });
  }
  const verdict = classifyRecipient(recipient, report.mta);
  const kind = signalKindOf(verdict);
  if (!kind) {
    return ignoredReceipt(logger, {
      report: 'bounce',
      code: 'not-a-bounce',
      reason: `the report is no bounce (${verdict.reason})`,
      log: { ...log, delivery: delivery.id },
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
    reportedAddress: reported && reported.toLowerCase() !== delivery.address.toLowerCase() ? reported : null,
    reportedMessageId:
      report.originalMessageId && report.originalMessageId !== delivery.messageId
        ? report.originalMessageId
        : null,
  });
  return appliedReceipt('bounce', [effect]);
}

/**
 * A complaint (ARF): applied to the delivery its return-path token names (in the envelope or the
 * report's original MAIL FROM), if the Message-ID agrees; without a token, to the delivery whose
 * unguessable Message-ID, which only the recipient saw, it quotes.
 */
export async function applyComplaintReport({
  ctx,
  report,
  envelope,
  log,
}: ReportToApply<Extract<InboundReport, { type: 'complaint' }>>): Promise<InboundReceipt> {
  const { logger } = ctx;
  const found = await deliveryByToken(ctx, [...envelope.envelopeTo, report.originalMailFrom]);
  if (found === 'forged') {
    return ignoredReceipt(logger, {
      report: 'complaint',
      code: 'forged-token',
      reason: 'forged or edited return-path token',
      log,
    });
  }
  let delivery: DeliveryRecord | undefined;
  if (found) {
    const checked = await tokenAgrees(ctx, found, report.originalMessageId);
    if (!('delivery' in checked)) {
      return ignoredReceipt(logger, {
        report: 'complaint',
        code: checked.code,
        reason: checked.reason,
        log: { ...log, delivery: found.id },
      });
    }
    delivery = checked.delivery;
  } else {
    // Without a token only the unguessable Message-ID, which only the recipient saw, names it.
    delivery = await deliveryByMessageId(ctx, report.originalMessageId);
  }
  if (!delivery) {
    return ignoredReceipt(logger, {
      report: 'complaint',
      code: 'no-token',
      reason: 'names no delivery of this engine',
      log,
    });
  }
  const effect = await applySignal(ctx, delivery, {
    kind: 'complaint',
    source: 'arf',
    reason: 'feedback',
    status: null,
    diagnostic: `feedback-type ${report.feedbackType}`,
  });
  return appliedReceipt('complaint', [effect]);
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
