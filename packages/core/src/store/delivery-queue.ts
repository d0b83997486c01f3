import type { OutboxWrite } from './event-records.js';
import type { ClaimedDelivery, RenderedContent } from './records.js';

/**
 * How `lastError` ends on a delivery held for a sender-side block (a policy block, a blocklisted sender, a
 * poor reputation): `queued`, due only at the hold's deadline, never retried before its broadcast,
 * destination or project is resumed. `PauseStore.removePause` makes the held deliveries of what it
 * resumes due at once, with this replaced by {@link SENDER_BLOCK_RESUMED}; one claimed still holding it
 * reached its deadline unresumed, and fails. The state is the text, so no store needs a column for it.
 */
export const SENDER_BLOCK_HELD = '(sender-side block: held until resumed)';

/** What {@link SENDER_BLOCK_HELD} becomes when a resume releases the delivery. */
export const SENDER_BLOCK_RESUMED = '(sender-side block: resumed)';

/** The outcome a worker records for a claimed delivery. */
export interface DeliveryOutcome {
  /**
   * `queued` means "retry at `nextAttemptAt`". `bounced` is a hard bounce at send time (the relay refused
   * the recipient with 5.1.x, "no such user"): final like `failed`, and the same status a DSN gives.
   */
  status: 'queued' | 'sent' | 'failed' | 'suppressed' | 'skipped' | 'bounced';
  /** Required when `status` is `queued`. */
  nextAttemptAt?: Date;
  lastResponse?: string | null;
  lastError?: string | null;
  sentAt?: Date | null;
  content?: RenderedContent | null;
  /**
   * The attempt the claim counted did not happen: nothing was handed to the transport. With `queued`, the
   * delivery was put back (its destination is at its limit), so that waiting for a limit never uses up
   * its attempts; with `suppressed` or `skipped`, it was settled unsent (a suppressed address, an
   * unsubscribe, a sandbox key), so that it does not show an attempt that never was. `attempts` goes back
   * down by one. Ignored with the other statuses.
   */
  uncounted?: boolean;
  /** When the outcome was written. */
  now: Date;
  /** Events of the outcome, written in the same transaction as it, and only if it is written. */
  outbox?: OutboxWrite;
}

/** Options of {@link DeliveryQueue.claimDeliveries}. */
export interface ClaimOptions {
  /** The current time: deliveries with `nextAttemptAt <= now` are due. */
  now: Date;
  /** At most this many deliveries. */
  limit: number;
  /** Length of the lease granted. */
  leaseMs: number;
}

/**
 * The hot path of a worker: claim due deliveries under a lease, renew the lease, record each attempt's
 * outcome fenced by the lease token, settle what is left of a cancelled mailing, and say when the next
 * delivery is due. Every rule of `Store` (store.ts) applies.
 */
export interface DeliveryQueue {
  /**
   * Claim up to `limit` due deliveries: status `queued` with `nextAttemptAt <= now`, or status `sending`
   * whose lease expired (`leaseExpiresAt <= now`), priority 0 (single messages) first and within a priority
   * oldest `nextAttemptAt` first (`DeliveryRecord.priority`), so that a broadcast's backlog never delays a
   * single message, whatever its project. Among broadcasts (priority 1) the projects are served fairly:
   * when the due broadcast deliveries of two or more projects do not all fit, each of those projects gets
   * an equal share of the room (round-robin over the projects with due broadcast deliveries, the room a
   * project cannot fill going to the others), so that one project's backlog never holds back another
   * project's broadcast. Which of a project's due deliveries fill its share may depend on the store
   * (oldest first where it can); the rest of the room goes in due order. Each claimed delivery
   * becomes `sending`, gets `leaseExpiresAt = now + leaseMs`, `leaseToken + 1` and `attempts + 1`.
   * Deliveries of mailings whose status is `cancelled` or `failed` are not claimed (a scheduled mailing's
   * deliveries carry `nextAttemptAt = scheduleFor`, so they become due by time alone). Nor are deliveries
   * an active pause covers (`PauseStore`; active: `until` null or after `now`): of a paused broadcast
   * (its mailing), of a paused project, or of a paused destination of its project (the delivery's
   * address ends with `@` and one of the pause's `domains`). They keep their `nextAttemptAt`.
   *
   * Race guarantee: a delivery is returned by at most one call per lease, whatever the number of
   * concurrent claimers (processes included, when `capabilities.multiProcess`).
   */
  claimDeliveries(options: ClaimOptions): Promise<ClaimedDelivery[]>;
  /**
   * Extend the leases of deliveries this worker holds, to `until`. Only rows still `sending` with the
   * given token are extended; returns the ids extended.
   */
  renewLeases(leases: ReadonlyArray<{ id: string; leaseToken: number }>, until: Date): Promise<string[]>;
  /**
   * Record the outcomes of attempts, many per round trip (a worker flushes its outcomes together). Each
   * item is fenced on its own: written only if its delivery is still `sending` with exactly `leaseToken`;
   * otherwise nothing of it is written (the lease was lost). The result says, in input order, whether
   * each was written. Items apply in order: an id repeated in one call finds what the earlier item
   * left (a written outcome ends the lease, so a later item of the same lease is not written).
   * A `queued` outcome clears the lease and sets `nextAttemptAt`. A written outcome's `outbox` (events
   * and webhook messages) is inserted in the same transaction as the outcome (see `EventStore`).
   */
  completeDeliveries(
    items: ReadonlyArray<{ id: string; leaseToken: number; outcome: DeliveryOutcome }>,
  ): Promise<boolean[]>;
  /**
   * Set every non-terminal delivery of the mailing (`queued`, or `sending` whose lease expired before
   * `now`) to `status`, with `lastError = reason`. Returns how many changed. Used for cancel.
   */
  settleOpenDeliveries(
    mailingId: string,
    status: 'skipped' | 'failed',
    reason: string,
    now: Date,
  ): Promise<number>;
  /**
   * The earliest `nextAttemptAt` of a `queued` delivery (of a mailing that is not cancelled or failed, and
   * that no pause active at `now` covers, as for `claimDeliveries`), to let an idle worker sleep until
   * then. Leases that will expire are not counted. Without `now`, pauses are judged at the current time.
   */
  nextDueAt(now?: Date): Promise<Date | undefined>;
}
