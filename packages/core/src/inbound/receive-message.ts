/**
 * Receiving one inbound message (the SMTP listener's, or a simulator's): size and engine checks, the
 * parse, then the report applied by its type (`apply-report.ts`).
 */
import { isMailroomError } from '../base/errors.js';
import { applyBounceReport, applyComplaintReport } from './apply-report.js';
import type { InboundContext } from './inbound-context.js';
import { deferredError, ignoredReceipt } from './inbound-receipts.js';
import type { InboundReport } from './inbound-report.js';
import type { InboundEnvelope, InboundReceipt } from './inbound-types.js';
import { parseInboundMessage } from './parse-inbound.js';

/** Largest inbound message read; the SMTP listener refuses larger ones at MAIL FROM or DATA. */
export const MAX_INBOUND_BYTES = 10 * 1024 * 1024;

/** One inbound message: its bytes (headers and body) and its envelope. */
export interface InboundMessage {
  readonly raw: Uint8Array;
  readonly envelope: InboundEnvelope;
}

/**
 * Takes one message: ignored (with a receipt saying why) when the engine has no bounce domain, when it
 * is too large, unreadable, an auto-reply or no report; else applied. Rejects, after counting the
 * deferral, when it cannot be applied now (see `MailroomInbound.receive`). Not counted here otherwise.
 */
export async function receiveMessage(
  ctx: InboundContext,
  { raw, envelope }: InboundMessage,
): Promise<InboundReceipt> {
  await ctx.ready();
  const { logger } = ctx;
  const log = {
    envelopeTo: envelope.envelopeTo.slice(0, 5),
    remoteAddress: envelope.remoteAddress,
    bytes: raw.byteLength,
  };
  if (!ctx.bounces) {
    const reason =
      "the engine has no bounce domain (createMailroom({ bounces: { domain: 'bounces.example.test' } }))";
    return ignoredReceipt(logger, { report: 'unrecognised', code: 'disabled', reason, log });
  }
  if (raw.byteLength > MAX_INBOUND_BYTES) {
    return ignoredReceipt(logger, {
      report: 'unrecognised',
      code: 'too-large',
      reason: 'message too large',
      log,
    });
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
        return await applyBounceReport({ ctx, report, envelope, log });
      case 'complaint':
        return await applyComplaintReport({ ctx, report, envelope, log });
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
        return ignoredReceipt(logger, {
          report: 'unrecognised',
          code: 'unrecognised',
          reason: report.reason,
          log,
        });
    }
  } catch (error) {
    if (!isMailroomError(error, 'INBOUND_DEFERRED')) {
      logger.error({ ...log, err: error }, 'inbound message could not be applied');
    }
    throw deferredError(ctx, { via: 'smtp', report: report.type, error });
  }
}
