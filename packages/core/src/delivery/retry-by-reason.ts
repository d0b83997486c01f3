/**
 * Retries by reason: the one table of how a temporary refusal (a 4xx reply at send time) is retried,
 * by what the refusal says. A greylisting server wants the same message again in a few minutes; a full
 * mailbox may be emptied over days, and retrying it every few minutes only adds refusals; a rate limit
 * is the destination's to set, so it goes to the destination's slow-down (the per-destination limits);
 * a block of the sender (a policy block, a blocklisted IP, a poor reputation), temporary or
 * permanent, is held until the operator resumes: another try to the same destination before the cause is
 * fixed only deepens the block.
 * Everything else keeps the worker's own backoff (`retryBaseMs`, `retryMaxMs`).
 *
 * docs/retries.md shows this table; `test/retry-by-reason.test.ts` checks that the two agree.
 */
import type { MailroomError } from '../base/errors.js';
import { BOUNCE_REASONS } from '../inbound/bounce-reasons.js';
import { classifyReason } from '../inbound/classify-reason.js';
import { REASON_PATTERNS } from '../inbound/reason-patterns.js';
import { statusCodeIn } from '../inbound/report-fields.js';
import { type DeliveryOutcome, SENDER_BLOCK_HELD } from '../store/delivery-queue.js';
import type { ClaimedDelivery } from '../store/records.js';
import { asTransportError, failureOutcome, type RetrySettings, retryDelay } from './retry-policy.js';

/** The kinds of temporary refusal the table tells apart. */
export type RetryReason =
  | 'greylisting'
  | 'mailboxfull'
  | 'rate-limit'
  | 'sender-block'
  | 'message-refused'
  | 'other';

/** How a kind of refusal is retried. */
export type RetryPlan =
  /** Retried on its own schedule: `firstMs` after the first refusal, doubling up to `maxMs`, for `windowMs`. */
  | {
      readonly kind: 'schedule';
      readonly firstMs: number;
      readonly maxMs: number;
      /** How long after the delivery first became due it is still retried (else the worker's `maxAgeMs`). */
      readonly windowMs?: number;
      readonly why: string;
    }
  /** Retried with the worker's backoff, and the destination told to slow down (its limits shrink). */
  | { readonly kind: 'destination-slow-down'; readonly why: string }
  /** Not retried: the delivery fails, recorded as a sender-side refusal. */
  | { readonly kind: 'no-retry'; readonly why: string }
  /**
   * Held, not failed: queued until the broadcast, destination or project is resumed, and failed if none
   * is within `windowMs` of the time the delivery became due (`SENDER_BLOCK_HELD`).
   */
  | { readonly kind: 'hold-until-resumed'; readonly windowMs: number; readonly why: string }
  /** The worker's own backoff (`retryBaseMs` doubling to `retryMaxMs`, within `maxAgeMs`). */
  | { readonly kind: 'worker-backoff'; readonly why: string };

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The table: one plan per kind of temporary refusal. */
export const RETRY_BY_REASON: Readonly<Record<RetryReason, RetryPlan>> = {
  greylisting: {
    kind: 'schedule',
    firstMs: 5 * MINUTE,
    maxMs: 30 * MINUTE,
    why: 'A greylisting server (451 4.7.1 "try again later", "greylisted") takes the same message once it has waited a few minutes; sooner is refused again.',
  },
  mailboxfull: {
    kind: 'schedule',
    firstMs: 4 * HOUR,
    maxMs: DAY,
    windowMs: 3 * DAY,
    why: 'A full mailbox (452 4.2.2) is emptied by its owner over hours or days; each try meanwhile is one more refusal. Three full-mailbox bounces in 14 days suppress the address (mailbox-unavailable).',
  },
  'rate-limit': {
    kind: 'destination-slow-down',
    why: 'A rate limit (421/450/451 "too many messages", speeding, too many connections) is the destination\'s: its per-destination limits shrink and the delivery waits for the slow-down\'s pause.',
  },
  'sender-block': {
    kind: 'hold-until-resumed',
    windowMs: 3 * DAY,
    why: 'A block of the sender (a policy block, a blocklisted IP, poor reputation, failed authentication), 4xx or 5xx, does not lift by itself, and each try before the cause is fixed deepens it: the delivery is held (queued, not failed, the address not suppressed) until the operator resumes its destination, broadcast or project, and fails with the refusal if none is resumed within 3 days.',
  },
  'message-refused': {
    kind: 'no-retry',
    why: 'A 4xx refusal of the message itself (its content, size or format, a virus, a refused command) is not lifted by waiting: the delivery fails as a sender-side refusal; the address is not suppressed.',
  },
  other: {
    kind: 'worker-backoff',
    why: "Any other temporary failure (a busy server, a network error, a 4xx the words do not explain): the worker's backoff, retryBaseMs doubling up to retryMaxMs, within maxAgeMs.",
  },
};

/** Words that name greylisting outright. */
const GREYLISTED = /gr[ae]y-?list/i;

/**
 * Words that say "come back later" for the message itself: greylisting when said under a 4.7.x status
 * (a 4.3.0 "try again later" is a server's own trouble, retried on the worker's backoff).
 */
const COME_BACK_LATER =
  /try again later|come back later|please retry|retry (again )?(later|in \d+)|temporarily (deferred|rejected)(?!.{0,40}(volume|complaint|rate|reputation))/i;

/** The kind of a failed send's refusal, read from its reply; `other` for anything but a 4xx reply. */
export function retryReasonOf(error: MailroomError): RetryReason {
  const text = error.response ?? error.message;
  const status = statusCodeIn(text);
  const code = error.responseCode;
  const temporary = code !== undefined ? code >= 400 && code < 500 : status?.startsWith('4.') === true;
  if (!temporary) return 'other';
  const verdict = classifyReason({
    status,
    replyCode: code === undefined ? null : String(code),
    diagnostic: text,
  });
  // 452 is also "insufficient system storage": the server's disk, not the mailbox, and soon fixed.
  if (verdict.reason === 'mailboxfull') {
    return REASON_PATTERNS.systemfull?.test(text) ? 'other' : 'mailboxfull';
  }
  if (verdict.reason === 'speeding' || verdict.reason === 'toomanyconn') return 'rate-limit';
  // 421 closes the session ("service not available") and 454 is what providers throttle with: the
  // server, not this message, wants less for now.
  if (code === 421 || code === 454) return 'rate-limit';
  // "Temporarily rate limited due to IP reputation" (Microsoft 4.7.650): a throttle, lifted by sending less.
  if (/rate[ -]?limit|throttl/i.test(text)) return 'rate-limit';
  if (GREYLISTED.test(text) || (status?.startsWith('4.7.') && COME_BACK_LATER.test(text))) {
    return 'greylisting';
  }
  if (BOUNCE_REASONS[verdict.reason].group === 'sender-side') {
    return isSenderBlock(verdict.reason) ? 'sender-block' : 'message-refused';
  }
  // 451 4.7.x with no other word: the usual greylisting reply.
  if (code === 451 && status?.startsWith('4.7.')) return 'greylisting';
  return 'other';
}

/**
 * The sender-side reasons that block the sender rather than refuse this one message: a policy block, a
 * blocklist, a reputation, a missing PTR, failed authentication. Held until resumed, 4xx or 5xx; the
 * others (a spam verdict on the message, content, size, format, a virus, relaying, a command, a rate) fail
 * as before.
 */
const SENDER_BLOCKS: ReadonlySet<string> = new Set([
  'blocked',
  'badreputation',
  'requireptr',
  'rejected',
  'policyviolation',
  'authfailure',
  'securityerror',
]);

/** True when `reason` (of the taxonomy) is a block of the sender (see {@link SENDER_BLOCKS}). */
export function isSenderBlock(reason: string): boolean {
  return SENDER_BLOCKS.has(reason);
}

/**
 * The outcome of a delivery held for a sender-side block: `queued` at the hold's deadline (`since` plus
 * the `sender-block` plan's window), `lastError` ending with {@link SENDER_BLOCK_HELD}, so that only a
 * resume makes it due again (`PauseStore.removePause`).
 */
export function holdOutcome(error: unknown, since: Date, now: Date): DeliveryOutcome {
  const err = asTransportError(error);
  const plan = RETRY_BY_REASON['sender-block'] as Extract<RetryPlan, { kind: 'hold-until-resumed' }>;
  return {
    status: 'queued',
    nextAttemptAt: new Date(Math.max(now.getTime() + 1, since.getTime() + plan.windowMs)),
    lastResponse: err.response ?? (err.responseCode ? String(err.responseCode) : null),
    lastError: `${err.message} ${SENDER_BLOCK_HELD}`,
    now,
  };
}

/**
 * The outcome of a held delivery claimed while still held: its hold's deadline passed with no resume.
 * Fails with the refusal it was held for.
 */
export function holdExpired(
  delivery: Pick<ClaimedDelivery, 'lastError' | 'lastResponse'>,
  now: Date,
): DeliveryOutcome {
  const days = (RETRY_BY_REASON['sender-block'] as { windowMs: number }).windowMs / DAY;
  return {
    status: 'failed',
    lastResponse: delivery.lastResponse,
    lastError: (delivery.lastError ?? '').replace(
      SENDER_BLOCK_HELD,
      `(sender-side block: not resumed within ${days} d)`,
    ),
    now,
  };
}

/** True when the delivery is held for a sender-side block (its `lastError` says so). */
export function isHeld(delivery: { readonly lastError?: string | null }): boolean {
  return delivery.lastError?.endsWith(SENDER_BLOCK_HELD) === true;
}

/** The plan of `reason`. */
export function retryPlanOf(reason: RetryReason): RetryPlan {
  return RETRY_BY_REASON[reason];
}

/**
 * The outcome of a failed attempt by its plan: `schedule` queues it on the plan's own backoff (within its
 * window, and `maxAttempts`), `no-retry` fails it now, `hold-until-resumed` holds it
 * ({@link holdOutcome}), the others keep the worker's backoff
 * ({@link failureOutcome}).
 */
export function planOutcome(
  plan: RetryPlan,
  delivery: Pick<ClaimedDelivery, 'attempts'>,
  error: unknown,
  settings: RetrySettings,
  since: Date,
  now: Date,
): DeliveryOutcome {
  const err = asTransportError(error);
  const lastResponse = err.response ?? (err.responseCode ? String(err.responseCode) : null);
  if (plan.kind === 'hold-until-resumed') return holdOutcome(error, since, now);
  if (plan.kind === 'no-retry') {
    return {
      status: 'failed',
      lastResponse,
      lastError: `${err.message} (sender-side refusal: not retried)`,
      now,
    };
  }
  if (plan.kind !== 'schedule' || !err.retryable)
    return failureOutcome(delivery, error, settings, since, now);
  const windowMs = plan.windowMs ?? settings.maxAgeMs;
  const at = now.getTime() + retryDelay(delivery.attempts, plan.firstMs, plan.maxMs);
  if (delivery.attempts < settings.maxAttempts && (!(windowMs > 0) || at - since.getTime() <= windowMs)) {
    return { status: 'queued', nextAttemptAt: new Date(at), lastResponse, lastError: err.message, now };
  }
  return { status: 'failed', lastResponse, lastError: `${err.message} (gave up: retried as planned)`, now };
}
