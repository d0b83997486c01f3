import type {
  AudienceGroupRecord,
  BatchRecord,
  ClaimedDelivery,
  DeliveryOutcome,
  DeliveryRecord,
  DeliveryStatus,
  IdempotencyRecord,
  MailingKind,
  MailingRecord,
  MailingStatus,
  ProfileRecord,
  ProfileStatus,
  ProfileUpsert,
  ProfileUpsertOptions,
  ProjectRecord,
  ProjectSecretRecord,
  SenderRecord,
  SourceJobRecord,
  SuppressionRecord,
  TemplateRecord,
} from './records.js';
import type { InboundSignalStore } from './store-inbound.js';

/**
 * Optional abilities a store declares as data; the core reads them to pick a strategy.
 */
export interface StoreCapabilities {
  /**
   * Several processes may claim from this store at once and each delivery is still claimed at most once
   * per lease (SQL stores: true; the memory store: false, it lives in one process).
   */
  readonly multiProcess: boolean;
}

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

/** Everything one accepted request writes, committed atomically by {@link Store.commitBatch}. */
export interface BatchWrite {
  target: BatchTarget;
  batch: BatchRecord;
  /** New deliveries. One whose (mailingId, address) already exists is skipped, not an error. */
  deliveries: DeliveryRecord[];
  /** Recipients to index into the project's audience. */
  profiles: ProfileUpsert[];
  profileOptions: ProfileUpsertOptions;
  /** Source jobs to start (broadcast sources). */
  sourceJobs: SourceJobRecord[];
  now: Date;
}

/** What {@link Store.commitBatch} reports. */
export interface BatchCommitResult {
  /** Deliveries actually inserted (the rest were duplicates of earlier ones). */
  inserted: number;
  /** The mailing after the write. */
  mailing: MailingRecord;
}

/** Options of {@link Store.claimDeliveries}. */
export interface ClaimOptions {
  /** The current time: deliveries with `nextAttemptAt <= now` are due. */
  now: Date;
  /** At most this many deliveries. */
  limit: number;
  /** Length of the lease granted. */
  leaseMs: number;
}

/** A page request over an ordered listing. */
export interface PageOptions {
  /** Return rows strictly after this cursor (the last row's key of the previous page). */
  after?: string | null;
  limit: number;
}

/** Counts of deliveries by status. Every status is present (0 when none). */
export type DeliveryCounts = Record<DeliveryStatus, number>;

/**
 * Persistence for Mailroom. A store holds no business logic: each method is a primitive whose
 * behaviour is fully stated here, and `storeTestSuite` from `@mailroom/core/testing` checks it.
 *
 * Rules for every method:
 * - Records go in and come out as the types in `records.ts`; dates as `Date`, JSON fields as values.
 * - A method that takes `now` sets the `updatedAt` of the rows it changes to `now`.
 * - Strings compare and sort by their bytes (binary collation): "by address" and "by ref" mean byte order,
 *   and `A@x.test` and `a@x.test` are different addresses (the core lower-cases only the domain).
 * - Lookups scoped by `projectId` never return another project's rows.
 * - A unique-key violation is reported as a `MailroomError` with code `CONFLICT`.
 * - Any other failure of the backend is a `MailroomError` with code `STORE_FAILED` and the original as `cause`.
 */
export interface Store extends InboundSignalStore {
  /** Short name for error messages and logs, for example `memory` or `sql:sqlite`. */
  readonly name: string;
  /** Optional abilities, as data. */
  readonly capabilities: StoreCapabilities;

  /** Prepare the backend (run migrations). Safe to call more than once and from several processes at once. */
  init(): Promise<void>;
  /** Release connections. The store is unusable afterwards. */
  close(): Promise<void>;

  // Projects and secrets

  /** Insert a project and its first secret, atomically. */
  createProject(project: ProjectRecord, secret: ProjectSecretRecord): Promise<void>;
  /** Add another secret to an existing project (rotation). */
  addProjectSecret(secret: ProjectSecretRecord): Promise<void>;
  /** Find a secret by its SHA-256 hex digest, with its project. */
  findSecret(hash: string): Promise<{ project: ProjectRecord; secret: ProjectSecretRecord } | undefined>;
  /** A project by id. */
  getProject(id: string): Promise<ProjectRecord | undefined>;
  /** All projects, oldest first. */
  listProjects(): Promise<ProjectRecord[]>;

  // Sender identities

  /** Insert a sender identity. `CONFLICT` if (projectId, address) exists. */
  addSender(sender: SenderRecord): Promise<void>;
  /** The sender identity with exactly this normalized address in the project. */
  findSender(projectId: string, address: string): Promise<SenderRecord | undefined>;
  /** The project's sender identities, by address. */
  listSenders(projectId: string): Promise<SenderRecord[]>;

  // Templates

  /** Insert a template, or replace the one with the same (projectId, ref) (the caller bumps `version`). */
  putTemplate(template: TemplateRecord): Promise<void>;
  /** A template by ref in the project. */
  getTemplate(projectId: string, ref: string): Promise<TemplateRecord | undefined>;
  /** The project's templates, by ref. */
  listTemplates(projectId: string): Promise<TemplateRecord[]>;

  // Audience

  /** Insert an audience group. `CONFLICT` if (projectId, ref) exists. */
  createGroup(group: AudienceGroupRecord): Promise<void>;
  /** An audience group by ref in the project. */
  getGroup(projectId: string, ref: string): Promise<AudienceGroupRecord | undefined>;
  /** The project's audience groups, by ref, each with its member count. */
  listGroups(projectId: string): Promise<Array<AudienceGroupRecord & { members: number }>>;
  /**
   * Upsert profiles by the rules of {@link ProfileUpsert}, and add them to `options.groupId` if set.
   * Atomic: all rows or none. Rows are already deduplicated by the caller.
   */
  upsertProfiles(
    projectId: string,
    rows: ProfileUpsert[],
    options: ProfileUpsertOptions,
    now: Date,
  ): Promise<void>;
  /** A profile by address in the project. */
  getProfile(projectId: string, address: string): Promise<ProfileRecord | undefined>;
  /** The profiles of `addresses` that exist in the project (any order; absent ones are left out). */
  findProfiles(projectId: string, addresses: readonly string[]): Promise<ProfileRecord[]>;
  /**
   * Set a profile's subscription status, creating a bare profile if there is none.
   */
  setProfileStatus(projectId: string, address: string, status: ProfileStatus, now: Date): Promise<void>;
  /**
   * Members of a group, ordered by address ascending, strictly after `page.after` (an address).
   * Stable under concurrent inserts: a member present for the whole listing is returned exactly once.
   */
  listGroupMembers(projectId: string, groupId: string, page: PageOptions): Promise<ProfileRecord[]>;

  // Suppression

  /** Insert or replace a suppression of (projectId, address). */
  addSuppression(suppression: SuppressionRecord): Promise<void>;
  /** Remove a suppression; true if one was removed. */
  removeSuppression(projectId: string, address: string): Promise<boolean>;
  /** Which of `addresses` are suppressed in the project (exact, already normalized addresses). */
  findSuppressed(projectId: string, addresses: readonly string[]): Promise<SuppressionRecord[]>;

  // Mailings, batches and deliveries

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
  ): Promise<boolean>;
  /**
   * Mark the mailing `completed` if, at the moment of the check, it is `queued` or `sending`, every one of
   * its deliveries is terminal and none of its source jobs is `pending` or `running`. Returns whether it
   * did. Atomic with respect to `commitBatch` on the same mailing.
   */
  completeMailingIfSettled(id: string, now: Date): Promise<boolean>;

  /**
   * Claim up to `limit` due deliveries: status `queued` with `nextAttemptAt <= now`, or status `sending`
   * whose lease expired (`leaseExpiresAt <= now`), oldest `nextAttemptAt` first. Each claimed delivery
   * becomes `sending`, gets `leaseExpiresAt = now + leaseMs`, `leaseToken + 1` and `attempts + 1`.
   * Deliveries of mailings whose status is `cancelled` or `failed` are not claimed (a scheduled mailing's
   * deliveries carry `nextAttemptAt = scheduleFor`, so they become due by time alone).
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
   * Record the outcome of an attempt. Fenced: written only if the delivery is still `sending` with
   * exactly `leaseToken`; otherwise nothing is written and the result is false (the lease was lost).
   * A `queued` outcome clears the lease and sets `nextAttemptAt`.
   */
  completeDelivery(id: string, leaseToken: number, outcome: DeliveryOutcome): Promise<boolean>;
  /**
   * Record the outcomes of several attempts in one round trip (a worker flushes a claimed batch's
   * outcomes together). Each item is fenced exactly like {@link Store.completeDelivery} and written or not
   * on its own; the result says, in input order, whether each was written.
   */
  completeDeliveries(
    items: ReadonlyArray<{ id: string; leaseToken: number; outcome: DeliveryOutcome }>,
  ): Promise<boolean[]>;
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
   * The earliest `nextAttemptAt` of a `queued` delivery (of a mailing that is not cancelled or failed), to
   * let an idle worker sleep until then. Leases that will expire are not counted.
   */
  nextDueAt(): Promise<Date | undefined>;

  // Source jobs

  /**
   * Claim one source job that is `pending`, or `running` with an expired lease; it becomes `running`
   * with a new lease and `leaseToken + 1`. At most one claimer gets a given job per lease.
   */
  claimSourceJob(options: { now: Date; leaseMs: number }): Promise<SourceJobRecord | undefined>;
  /**
   * Append deliveries expanded from a source and checkpoint its progress, atomically and fenced by
   * `leaseToken`: returns `undefined` (nothing written) if the job's token changed. Deliveries whose
   * (mailingId, address) exists are skipped. `patch` may set `status` (`done`/`failed`), `checkpoint`,
   * counters, `rowErrors` and `error`; the lease is extended to `leaseUntil`.
   *
   * `options.after`: the commit of the job's previous page, still in flight. This page is written only
   * once that one has settled, and not at all if it rejected (this call then rejects with its error).
   * A store may prepare the page meanwhile (the SQL store builds its statements): the worker passes it
   * so that preparing one page overlaps writing the one before.
   */
  commitSourcePage(
    jobId: string,
    leaseToken: number,
    page: {
      deliveries: DeliveryRecord[];
      profiles: ProfileUpsert[];
      profileOptions: ProfileUpsertOptions;
      patch: Partial<
        Pick<SourceJobRecord, 'status' | 'checkpoint' | 'rowsDone' | 'rowsFailed' | 'rowErrors' | 'error'>
      >;
      leaseUntil: Date;
      now: Date;
    },
    options?: { after?: Promise<unknown> },
  ): Promise<{ inserted: number } | undefined>;
  /** A mailing's source jobs, oldest first. */
  listSourceJobs(mailingId: string): Promise<SourceJobRecord[]>;

  // Idempotency

  /**
   * Begin a request under an idempotency key. Atomically: if no live record exists for (projectId, key)
   * (none, or `expiresAt <= now`), insert `record` (state `running`) and return `{ created: true }`;
   * otherwise return the existing record. Of concurrent calls with one key, exactly one gets `created`.
   */
  beginIdempotent(
    record: IdempotencyRecord,
    now: Date,
  ): Promise<{ created: true } | { created: false; existing: IdempotencyRecord }>;
  /** Store the response of a key's request and mark it `done`. */
  finishIdempotent(projectId: string, key: string, response: IdempotencyRecord['response']): Promise<void>;
  /** Forget a key (its request failed validation or crashed before committing). */
  dropIdempotent(projectId: string, key: string): Promise<void>;
  /**
   * Delete at most `limit` idempotency records, of any project, whose `expiresAt <= now`; returns how many.
   * A caller that wants them all calls again until it gets less than `limit`.
   */
  pruneIdempotent(now: Date, limit: number): Promise<number>;

  // Scheduling and retention

  /**
   * Move a scheduled mailing to another time. If its status is `scheduled`: set `options.scheduleFor` to
   * `scheduleFor`, the status to `status`, `updatedAt` to `now`, and the `nextAttemptAt` of each of its
   * deliveries that is `queued` and was never attempted (`attempts` 0) to `scheduleFor`; return true.
   * Otherwise (no such mailing, or another status) write nothing and return false.
   *
   * Race guarantee: atomic, and a compare-and-set on the status like {@link Store.setMailingStatus}: of a
   * reschedule and a racing status change (a cancel) at most one succeeds; a `commitBatch` to the mailing
   * is ordered entirely before or after it; a delivery is either claimed or moved, never both.
   */
  rescheduleMailing(
    id: string,
    scheduleFor: Date,
    status: 'scheduled' | 'queued',
    now: Date,
  ): Promise<boolean>;
  /** The earliest `sentAt` of the mailing's deliveries, or undefined when none has been sent. */
  firstSentAt(mailingId: string): Promise<Date | undefined>;
  /**
   * Forget kept rendered content: set `content` to null on at most `limit` deliveries, of any project, whose
   * `content` is not null and whose `updatedAt` is before `before` (content is written with an outcome, which
   * sets `updatedAt`). Leaves `updatedAt` as it is. Returns how many it cleared; a caller that wants them all
   * calls again until it gets less than `limit`.
   */
  pruneDeliveryContent(before: Date, limit: number): Promise<number>;

  // Settings of the installation

  /**
   * A setting of the whole installation (not of one project), created on first use: if no setting `name`
   * exists, store `value`. Returns the stored value.
   *
   * Race guarantee: of concurrent calls with one name (processes included, when
   * `capabilities.multiProcess`), every one returns the same value: the one stored first.
   */
  ensureSetting(name: string, value: string, now: Date): Promise<string>;
}
