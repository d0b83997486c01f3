/**
 * Soft bounces that are really hard: a mailbox that is full, or an account that is suspended, and keeps
 * being so. Each such bounce is soft (the address exists), but one that keeps failing over days is as
 * good as gone, and mailing it again and again costs the sender's reputation. The rule: `limit` bounces
 * of these recipient-side reasons, on distinct deliveries, within `windowDays`, with no delivery to the
 * address in between, suppress the address with its own reason, `mailbox-unavailable` (the operator
 * removes it like any other suppression).
 */
import { MailroomError } from '../base/errors.js';
import type { BounceReason } from './bounce-reasons.js';

/** The soft reasons that speak of the recipient's own mailbox (not of a server, a queue or a filter). */
export const RECIPIENT_SIDE_SOFT_REASONS: readonly BounceReason[] = ['mailboxfull', 'suspend'];

/** The `bounces.mailboxUnavailable` option: when recipient-side soft bounces suppress. */
export interface MailboxUnavailableOptions {
  /**
   * Recipient-side soft bounces (distinct deliveries) within the window, with no delivery in between,
   * after which the address is suppressed.
   * @default 3
   */
  limit?: number;
  /**
   * The window, in days, counted back from each bounce.
   * @default 14
   */
  windowDays?: number;
}

/** The resolved rule. */
export interface MailboxUnavailableRule {
  readonly limit: number;
  readonly windowMs: number;
}

const DAY_MS = 86_400_000;

/** The rule when none is configured: 3 bounces over 14 days. */
export const DEFAULT_MAILBOX_UNAVAILABLE: MailboxUnavailableRule = { limit: 3, windowMs: 14 * DAY_MS };

/** The rule of `options`, checked (`VALIDATION_FAILED` for a limit below 1 or a window not above 0). */
export function mailboxUnavailableRule(options?: MailboxUnavailableOptions): MailboxUnavailableRule {
  const limit = options?.limit ?? DEFAULT_MAILBOX_UNAVAILABLE.limit;
  const days = options?.windowDays ?? DEFAULT_MAILBOX_UNAVAILABLE.windowMs / DAY_MS;
  if (!(Number.isSafeInteger(limit) && limit >= 1)) {
    throw invalid('limit', 'bounces.mailboxUnavailable.limit must be a whole number of at least 1');
  }
  if (!(Number.isFinite(days) && days > 0)) {
    throw invalid('windowDays', 'bounces.mailboxUnavailable.windowDays must be a number above 0');
  }
  return { limit, windowMs: Math.round(days * DAY_MS) };
}

/** Whether a soft bounce of `reason` counts towards {@link MailboxUnavailableRule} (not the soft streak). */
export function isRecipientSideSoft(reason: BounceReason): boolean {
  return RECIPIENT_SIDE_SOFT_REASONS.includes(reason);
}

function invalid(field: string, message: string): MailroomError {
  return new MailroomError('VALIDATION_FAILED', message, {
    issues: [{ code: 'custom', path: ['bounces', 'mailboxUnavailable', field], message }],
  });
}
