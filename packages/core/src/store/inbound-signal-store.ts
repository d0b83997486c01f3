import type { OutboxWrite } from './event-records.js';
import type { DeliveryStatus, InboundSignalKind, InboundSignalRecord, SuppressionRecord } from './records.js';

/**
 * Everything one inbound signal (bounce, complaint, delivery report) changes, applied atomically by
 * {@link InboundSignalStore.applyInboundSignal}. The core decides every field; the store applies exactly
 * these rules and no others.
 */
export interface InboundSignalWrite {
  /** The signal, kept in the log. Its `dedupeKey` makes a repeated signal change nothing. */
  signal: InboundSignalRecord;
  /**
   * Set the delivery (`signal.deliveryId`) to `status`, with `lastError = lastError`, if its current status
   * is one of `from` (else leave it as it is).
   */
  delivery?: { status: DeliveryStatus; from: readonly DeliveryStatus[]; lastError: string };
  /**
   * Suppress the address, unless it is already suppressed (an existing suppression, and its reason, is
   * kept: the first reason is the one that explains it).
   */
  suppress?: SuppressionRecord;
  /**
   * Add one to the address's soft-bounce streak (project and `signal.address`); when the streak reaches
   * `suppressAt`, suppress the address with `suppression` (as `suppress` does).
   */
  softBounce?: { suppressAt: number; suppression: SuppressionRecord };
  /**
   * A recipient-side soft bounce (a full mailbox, a suspended account; the core's rule, see
   * `inbound/mailbox-unavailable.ts`): once `signal` is inserted, count the address's recipient-side
   * bounces (project and `signal.address`): the distinct deliveries with a `soft-bounce` signal whose
   * reason is one of `reasons`, created at or after `since` and after the address's last delivery. The
   * last delivery is the latest of: a `delivered` signal of the address (its `createdAt`); a delivery of
   * the address, of a mailing of the project updated at or after `since`, in status `sent` with a `sentAt`
   * and no `hard-bounce`, `soft-bounce` or `sender-side` signal (its `sentAt`). When the count reaches
   * `suppressAt`, suppress the address with `suppression` (as `suppress` does).
   */
  mailboxUnavailable?: {
    reasons: readonly string[];
    since: Date;
    suppressAt: number;
    suppression: SuppressionRecord;
  };
  /** Set the address's soft-bounce streak back to 0 (a positive delivery report). */
  resetSoftBounces?: boolean;
  /** Set the profile of the address `unsubscribed`, creating a bare profile if there is none. */
  unsubscribe?: boolean;
  /**
   * The signal's events (`email.bounced`, `email.complained`) and their webhook messages, inserted in the
   * same transaction, and only when the signal is applied (see `EventStore`).
   */
  outbox?: OutboxWrite;
  /** When the write happens: `updatedAt` of every changed row. */
  now: Date;
}

/** What {@link InboundSignalStore.applyInboundSignal} did. */
export interface InboundSignalResult {
  /** False when a signal with the same `dedupeKey` was applied before: nothing was written. */
  applied: boolean;
  /** The delivery's status was changed. */
  deliveryChanged: boolean;
  /** This call added a suppression (false when none was asked or the address already had one). */
  suppressed: boolean;
  /** The soft-bounce streak after this call, when `softBounce` or `resetSoftBounces` was given. */
  softBounces: number | null;
  /** The recipient-side bounces counted, when `mailboxUnavailable` was given (else absent). */
  mailboxUnavailable?: number;
}

/** What {@link InboundSignalStore.countInboundSignals} counts: signals of one project, filtered. */
export interface SignalCountQuery {
  projectId: string;
  /** Only signals of these kinds (for the reputation guard: `['sender-side']`). */
  kinds: readonly InboundSignalKind[];
  /** Only signals about deliveries of this mailing (a broadcast). */
  mailingId?: string;
  /** Only signals about addresses at this destination domain (lower-case). */
  domain?: string;
  /** Only signals created at or after this time. */
  since?: Date;
}

/** One group of {@link InboundSignalStore.countInboundSignals}: signals of one kind, domain and reason. */
export interface SignalCount {
  kind: InboundSignalKind;
  domain: string;
  reason: string | null;
  count: number;
}

/**
 * The role of a `Store` that applies inbound signals (bounces, complaints, delivery reports) to
 * deliveries, suppressions and profiles. Written by `mailroom.inbound`; every rule of `Store` (store.ts)
 * applies.
 */
export interface InboundSignalStore {
  /**
   * Apply one inbound signal in ONE transaction: insert `signal`, then (in this order) the delivery's
   * status change, the soft-bounce streak, the suppression, the profile's unsubscribe and the `outbox`, as
   * {@link InboundSignalWrite} states. If a signal with the same `dedupeKey` exists, nothing at all is
   * written (no event either) and `applied` is false.
   *
   * Race guarantee: of concurrent calls with one `dedupeKey` (processes included, when
   * `capabilities.multiProcess`), exactly one applies; concurrent soft bounces of one address each count
   * once (the streak is incremented in the store, never read-modify-written by the caller), and of those
   * that reach `suppressAt` only the first adds the suppression. A delivery's status change is a
   * compare-and-set against `from`, so it never overwrites a status set meanwhile by a worker. The
   * `mailboxUnavailable` count reads committed signals: of two recipient-side bounces of one address
   * committed at the same moment, each may miss the other, so the address is suppressed by the next one
   * (never before the limit); a suppression is added at most once.
   */
  applyInboundSignal(write: InboundSignalWrite): Promise<InboundSignalResult>;
  /** The signals kept for a delivery, oldest first. */
  listInboundSignals(deliveryId: string): Promise<InboundSignalRecord[]>;
  /**
   * How many signals match `query`, grouped by kind, domain and reason: largest groups first, then by
   * domain, kind and reason (ascending; a null reason first). Groups with no signal are not listed. Read
   * by the dashboard (refusals per destination) and the reputation guard (per project, broadcast or
   * destination).
   */
  countInboundSignals(query: SignalCountQuery): Promise<SignalCount[]>;
}
