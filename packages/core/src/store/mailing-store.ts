import type { OutboxWrite } from './event-records.js';
import type { PageOptions } from './paging.js';
import type {
  BatchRecord,
  DeliveryRecord,
  DeliveryStatus,
  MailingKind,
  MailingRecord,
  MailingStatus,
  ProfileUpsert,
  ProfileUpsertOptions,
  SourceJobRecord,
} from './records.js';

/** How a batch attaches to its mailing. */
export type BatchTarget =
  | {
      /** Create this mailing (the initial batch or a single message). Fails with `CONFLICT` if the ref exists. */
      create: MailingRecord;
    }
  | {
      /** Append to an existing mailing, by id. */
      mailingId: string;
      /**
       * Only if its status is one of these; otherwise the whole write is refused with `BROADCAST_CLOSED`
       * and nothing is written.
       */
      allowStatus: readonly MailingStatus[];
      /** The status to set after appending (for example `sending` to reopen a completed broadcast). */
      setStatus: MailingStatus;
    };

/** Everything one accepted request writes, committed atomically by {@link MailingStore.commitBatch}. */
export interface BatchWrite {
  target: BatchTarget;
  batch: BatchRecord;
  /** New deliveries. One whose (mailingId, address) already exists is skipped, not an error. */
  deliveries: DeliveryRecord[];
  /**
   * Recipients to index into the project's audience, each by the core's profile-merge rule
   * (`newProfile` for an absent profile, `mergeProfile` onto an existing one; a profile is written,
   * `updatedAt = now`, only when the rule changed it), then added to `profileOptions.groupId` when set.
   * Rows apply in order: a repeated address merges onto what its earlier row left.
   */
  profiles: ProfileUpsert[];
  profileOptions: ProfileUpsertOptions;
  /** Source jobs to start (broadcast sources). */
  sourceJobs: SourceJobRecord[];
  now: Date;
}

/** What {@link MailingStore.commitBatch} reports. */
export interface BatchCommitResult {
  /** Deliveries actually inserted (the rest were duplicates of earlier ones). */
  inserted: number;
  /** The mailing after the write. */
  mailing: MailingRecord;
}

/** Counts of deliveries by status. Every status is present (0 when none). */
export type DeliveryCounts = Record<DeliveryStatus, number>;

/**
 * Mailings and their batches: the atomic write of an accepted request ({@link MailingStore.commitBatch}),
 * a mailing's status (compare-and-set, completion, rescheduling), and the reads of a mailing and its
 * deliveries that the API and the dashboard make. Claiming and completing deliveries is the
 * `DeliveryQueue`'s. Every rule of `Store` (store.ts) applies.
 */
export interface MailingStore {
  // Mailings and batches

  /**
   * Commit one accepted request atomically: create the mailing or append to it (checking its status),
   * insert the batch, the deliveries (skipping any whose (mailingId, address) exists), upsert the
   * profiles, and insert the source jobs. Either all of it is durable when the promise resolves, or
   * none of it is written. Increments the mailing's `batchCount` (a created mailing ends at 1) and sets
   * `updatedAt` to `now`. Appending to an unknown `mailingId` is `NOT_FOUND`.
   *
   * Race guarantee: two concurrent commits to one mailing never produce two deliveries for one address,
   * and a commit never appends to a mailing whose status left `allowStatus` before it committed.
   */
  commitBatch(write: BatchWrite): Promise<BatchCommitResult>;
  /**
   * Optional: commit several accepted requests (the items of a batch send, each its own mailing) in ONE
   * transaction, each exactly as {@link MailingStore.commitBatch} commits it, in order. All of them are
   * durable when the promise resolves, or none is written (a refusal of one, such as `CONFLICT` or
   * `BROADCAST_CLOSED`, refuses them all). Answers one result per write, in order. One transaction
   * instead of one per message is what makes a batch of 100 cheap; a store without it is called
   * `commitBatch` once per write.
   *
   * Race guarantee: the same as `commitBatch` for every write; other transactions see all of them or none.
   */
  commitBatches?(writes: readonly BatchWrite[]): Promise<BatchCommitResult[]>;
  /** A mailing by ref in the project. */
  getMailing(projectId: string, ref: string): Promise<MailingRecord | undefined>;
  /** A mailing by id (worker use, not scoped: ids never leave the engine). */
  getMailingById(id: string): Promise<MailingRecord | undefined>;
  /** A project's mailings of one kind, newest first; `page.after` is a mailing id. */
  listMailings(projectId: string, kind: MailingKind, page: PageOptions): Promise<MailingRecord[]>;
  /**
   * Set a mailing's status if its current status is one of `from`; returns whether it changed.
   * Compare-and-set: of two racing calls with overlapping `from`, at most one changes it.
   */
  setMailingStatus(
    id: string,
    from: readonly MailingStatus[],
    to: MailingStatus,
    now: Date,
    /** Events of the change, written in the same transaction only if the status changed. */
    outbox?: OutboxWrite,
  ): Promise<boolean>;
  /**
   * Mark the mailing `completed` if, at the moment of the check, it is `queued` or `sending`, every one of
   * its deliveries is terminal and none of its source jobs is `pending` or `running`. Returns whether it
   * did. Atomic with respect to `commitBatch` on the same mailing.
   */
  completeMailingIfSettled(
    id: string,
    now: Date,
    /** Events of the completion, written in the same transaction only if it completed the mailing. */
    outbox?: OutboxWrite,
  ): Promise<boolean>;

  // Scheduling

  /**
   * Move a scheduled mailing to another time. If its status is `scheduled`: set `options.scheduleFor` to
   * `scheduleFor`, the status to `status`, `updatedAt` to `now`, and the `nextAttemptAt` of each of its
   * deliveries that is `queued` and was never attempted (`attempts` 0) to `scheduleFor`; return true.
   * Otherwise (no such mailing, or another status) write nothing and return false.
   *
   * Race guarantee: atomic, and a compare-and-set on the status like {@link MailingStore.setMailingStatus}:
   * of a reschedule and a racing status change (a cancel) at most one succeeds; a `commitBatch` to the
   * mailing is ordered entirely before or after it; a delivery is either claimed or moved, never both.
   */
  rescheduleMailing(
    id: string,
    scheduleFor: Date,
    status: 'scheduled' | 'queued',
    now: Date,
  ): Promise<boolean>;

  // A mailing's deliveries, read

  /** A delivery by id. */
  getDelivery(id: string): Promise<DeliveryRecord | undefined>;
  /** A delivery of a mailing by address. */
  findDelivery(mailingId: string, address: string): Promise<DeliveryRecord | undefined>;
  /** A mailing's deliveries ordered by address, optionally of one status; `page.after` is an address. */
  listDeliveries(
    mailingId: string,
    page: PageOptions & { status?: DeliveryStatus },
  ): Promise<DeliveryRecord[]>;
  /** Counts of a mailing's deliveries by status. */
  countDeliveries(mailingId: string): Promise<DeliveryCounts>;
  /** The earliest `sentAt` of the mailing's deliveries, or undefined when none has been sent. */
  firstSentAt(mailingId: string): Promise<Date | undefined>;
  /**
   * Optional: the mailing's `queued` deliveries due after `now`, counted by the UTC hour they are due in
   * (`nextAttemptAt` rounded down to the hour), earliest first; hours with none are left out. How a
   * broadcast spread over a day by local times says what waits for when.
   */
  countWaitingByHour?(mailingId: string, now: Date): Promise<WaitingHour[]>;
}

/** Deliveries waiting for one hour: see {@link MailingStore.countWaitingByHour}. */
export interface WaitingHour {
  /** The start of the UTC hour. */
  hour: Date;
  count: number;
}
