import type { DeliveryRecord, ProfileUpsert, ProfileUpsertOptions, SourceJobRecord } from './records.js';

/**
 * The jobs that expand a broadcast's source (a CSV file, an audience group) into deliveries, page by
 * page, under a lease like the delivery queue's. Every rule of `Store` (store.ts) applies.
 */
export interface SourceJobStore {
  /**
   * Claim one source job that is `pending`, or `running` with an expired lease; it becomes `running`
   * with a new lease and `leaseToken + 1`. At most one claimer gets a given job per lease.
   */
  claimSourceJob(options: { now: Date; leaseMs: number }): Promise<SourceJobRecord | undefined>;
  /**
   * Append deliveries expanded from a source and checkpoint its progress, atomically and fenced by
   * `leaseToken`: returns `undefined` (nothing written) if the job's token changed. Deliveries whose
   * (mailingId, address) exists are skipped; profiles are upserted as `BatchWrite.profiles` says (into
   * the job's project). `patch` may set `status` (`done`/`failed`), `checkpoint`, counters, `rowErrors`
   * and `error`; the lease is extended to `leaseUntil`.
   *
   * `options.after`: the commit of the job's previous page, still in flight. This page is written only
   * once that one has settled, and not at all if it rejected (this call then rejects with its error).
   * A store may prepare the page meanwhile (the SQL store builds its statements): the worker passes it
   * so that preparing one page overlaps writing the one before.
   *
   * `skippedTraits` (present only when not 0): the incoming traits the profile merge left out to keep
   * profiles within the traits cap (`MergedProfile.skippedTraits`, summed over the page).
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
  ): Promise<{ inserted: number; skippedTraits?: number } | undefined>;
  /** A mailing's source jobs, oldest first. */
  listSourceJobs(mailingId: string): Promise<SourceJobRecord[]>;
}
