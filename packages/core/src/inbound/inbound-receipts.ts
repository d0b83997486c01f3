import type { Logger } from '../base/base-types.js';
import { isMailroomError } from '../base/errors.js';
import type { InboundContext } from './inbound-context.js';
import type { InboundEvents } from './inbound-events.js';
import type {
  InboundEffect,
  InboundIgnoreCode,
  InboundMessageEvent,
  InboundReceipt,
} from './inbound-types.js';

/** What a receipt is about: the kind of report, as `InboundReceipt.report` names it. */
export type ReceiptReport = InboundReceipt['report'];

/** A message or notification that changes nothing, and why (see {@link ignoredReceipt}). */
export interface Ignored {
  readonly report: ReceiptReport;
  readonly code: InboundIgnoreCode;
  /** Why, in words, for the log and the receipt. */
  readonly reason: string;
  /** What the log line says of the message (its envelope, its delivery). */
  readonly log: Record<string, unknown>;
}

/** Logs a message that changes nothing, and returns its receipt. */
export function ignoredReceipt(logger: Logger, { report, code, reason, log }: Ignored): InboundReceipt {
  logger.warn({ ...log, report, reason, code }, 'inbound message ignored');
  return { outcome: 'ignored', report, reason, code, effects: [] };
}

/** The receipt of a report that was applied: `applied` if one effect changed something, else `duplicate`. */
export function appliedReceipt(report: ReceiptReport, effects: InboundEffect[]): InboundReceipt {
  return { outcome: effects.some((e) => e.applied) ? 'applied' : 'duplicate', report, effects };
}

/** Emits `inbound:message` for a receipt (the metrics count it); returns the receipt. */
export function countedReceipt(
  ctx: InboundContext,
  via: InboundMessageEvent['via'],
  receipt: InboundReceipt,
): InboundReceipt {
  ctx.events.view<InboundEvents>().emit('inbound:message', {
    via,
    report: receipt.report,
    outcome: receipt.outcome,
    code: receipt.code ?? null,
  });
  return receipt;
}

/** A report that could not be applied now: the sender should try again. */
export interface Deferral {
  readonly via: InboundMessageEvent['via'];
  readonly report: ReceiptReport;
  /** The error (`INBOUND_DEFERRED` when the send is not recorded yet, else the store's failure). */
  readonly error: unknown;
}

/** Emits `inbound:message` for a deferral (not sent yet, or the store failed); returns the error to rethrow. */
export function deferredError(ctx: InboundContext, { via, report, error }: Deferral): unknown {
  ctx.events.view<InboundEvents>().emit('inbound:message', {
    via,
    report,
    outcome: 'deferred',
    code: isMailroomError(error, 'INBOUND_DEFERRED') ? 'not-sent-yet' : 'store-failed',
  });
  return error;
}
