/**
 * One attempt at a delivery that passed its checks and was built: through the gates (`send-admission.ts`),
 * the send, and the outcome it leads to. A permanent refusal is read as a bounce with a reason.
 */
import { MailroomError } from '../base/errors.js';
import type { InboundContext } from '../inbound/inbound-context.js';
import { recordRefusal, type SignalFacts } from '../inbound/inbound-effects.js';
import { refusalFacts, temporaryRefusalFacts } from '../inbound/refusal-reason.js';
import type { DeliveryOutcome } from '../store/delivery-queue.js';
import type { ClaimedDelivery, MailingRecord } from '../store/records.js';
import { receiptResponse, type SendReceipt } from '../transport/transport.js';
import { type DestinationGate, deferredOutcome, isDestinationSlowDown } from './destination-gate.js';
import {
  holdOutcome,
  isHeld,
  isSenderBlock,
  planOutcome,
  retryPlanOf,
  retryReasonOf,
} from './retry-by-reason.js';
import { backpressureOf, pausedOutcome } from './retry-policy.js';
import type { createSendAdmission, SendSignal } from './send-admission.js';
import type { SendGate } from './send-gate.js';
import type { ResolvedWorkerOptions } from './worker-options.js';

/** What one attempt is about. */
export interface SendAttempt {
  delivery: ClaimedDelivery;
  mailing: MailingRecord;
  /** Hands the built message to the transport (timed by the caller). */
  send: () => Promise<SendReceipt>;
  /** The rendered content, kept when the mailing stores it. */
  content: DeliveryOutcome['content'];
  /** When the delivery's retry window started. */
  since: Date;
  destination: string | undefined;
  senderDomain: string;
  route: string | undefined;
}

/** What an attempt needs of its worker. */
export interface AttemptParts {
  ctx: InboundContext;
  opts: ResolvedWorkerOptions;
  admission: ReturnType<typeof createSendAdmission>;
  gate: SendGate;
  destinations: DestinationGate | undefined;
  /** True once the worker stops starting sends: the attempt hands the delivery back instead. */
  halted(): boolean;
  /** True when a pause known here now covers the delivery: it is handed back unsent too. */
  held(delivery: ClaimedDelivery): boolean;
  /** The outcome of a delivery handed back unsent. */
  handBack(delivery: ClaimedDelivery): DeliveryOutcome;
  /** Outcomes of a relay's permanent refusal, with its facts (they emit `email.bounced`). */
  refusals: WeakMap<DeliveryOutcome, SignalFacts>;
}

/** Runs one attempt: its outcome, never a throw for the send's own failure. */
export async function runAttempt(attempt: SendAttempt, parts: AttemptParts): Promise<DeliveryOutcome> {
  const { delivery, mailing } = attempt;
  const { ctx, opts } = parts;
  const { clock } = ctx;
  if (parts.halted()) return parts.handBack(delivery);
  const admission = await parts.admission.enter({
    projectId: delivery.projectId,
    senderDomain: attempt.senderDomain,
    route: attempt.route,
    destination: attempt.destination,
  });
  if (!admission.go) {
    admission.leave();
    return parts.halted()
      ? parts.handBack(delivery)
      : deferredOutcome(admission.until, admission.reason, clock.now());
  }
  // The gates hear how the send went as soon as it is known (a destination's slow-down before its
  // pause is read), once.
  let left = false;
  const leave = (signal: SendSignal) => {
    if (left) return;
    left = true;
    admission.leave(signal);
  };
  try {
    // The last moment to hear of a pause written since the claim (here or by another worker).
    if (parts.halted() || parts.held(delivery)) return parts.handBack(delivery);
    const receipt = await attempt.send();
    leave('ok');
    const now = clock.now();
    return {
      status: 'sent',
      lastResponse: receiptResponse(receipt),
      lastError: null,
      sentAt: now,
      content: mailing.options.storeContent ? attempt.content : null,
      now,
    };
  } catch (error) {
    const pressure = backpressureOf(error);
    if (pressure === 'pause') {
      // The account may not send for now: wait out the pause without holding it against the delivery.
      leave('pause');
      return pausedOutcome(error, parts.gate.resumesInMs, clock.now());
    }
    // A temporary refusal is retried by what it says (retry-by-reason.ts): greylisting after minutes, a
    // full mailbox over days, a rate limit by the destination's slow-down, a block of the sender never.
    const retryReason = error instanceof MailroomError ? retryReasonOf(error) : 'other';
    const plan = retryPlanOf(retryReason);
    // With destinations, a slow-down slows the destination that said it, never the whole transport.
    const slowDestination =
      admission.destinationAdmitted &&
      (plan.kind === 'destination-slow-down' ||
        (plan.kind === 'worker-backoff' && isDestinationSlowDown(error)));
    leave(slowDestination ? 'destination-slow-down' : pressure === 'slow-down' ? 'slow-down' : 'failed');
    let outcome = planOutcome(plan, delivery, error, opts, attempt.since, clock.now());
    const { destination } = attempt;
    const resumes =
      slowDestination && destination !== undefined && parts.destinations?.pausedUntil(destination);
    if (resumes && outcome.status === 'queued' && (outcome.nextAttemptAt as Date) < resumes) {
      outcome = { ...outcome, nextAttemptAt: resumes };
    }
    // A permanent refusal is a bounce with a reason, and has that reason's effect: a recipient-hard
    // one suppresses the address and ends the delivery `bounced` (told at once instead of by a DSN
    // later), a sender-side one never suppresses: a block of the sender is held until resumed, any
    // other (the message's content, size, format) fails the delivery.
    if (retryReason === 'mailboxfull' && outcome.status === 'queued' && error instanceof MailroomError) {
      // A full mailbox retried later still counts, once per delivery, towards `mailboxUnavailable`.
      const full = temporaryRefusalFacts(error);
      if (full?.kind === 'soft-bounce') {
        await recordRefusal(ctx, delivery, { ...full, dedupeKey: `soft-bounce:${delivery.id}` });
      }
    }
    const facts =
      error instanceof MailroomError
        ? (refusalFacts(error) ??
          (plan.kind === 'no-retry' || plan.kind === 'hold-until-resumed'
            ? temporaryRefusalFacts(error)
            : undefined))
        : undefined;
    // A block of the sender, permanent too, is held until resumed: not failed, never suppressed.
    if (facts?.kind === 'sender-side' && isSenderBlock(facts.reason) && outcome.status === 'failed') {
      outcome = holdOutcome(error, attempt.since, clock.now());
    }
    if (facts && (outcome.status === 'failed' || isHeld(outcome))) {
      if (facts.kind === 'hard-bounce') outcome = { ...outcome, status: 'bounced' };
      await recordRefusal(ctx, delivery, facts);
      parts.refusals.set(outcome, facts);
    }
    return outcome;
  } finally {
    leave('failed');
  }
}
