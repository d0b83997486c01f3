import type { ImportConsentRow } from '../consent/import-consent.js';
import type { BaseContext } from '../context/base-context.js';
import type {
  DeliveryRecord,
  MailingRecord,
  ProfileUpsert,
  ProfileUpsertOptions,
  SourceJobRecord,
} from '../store/records.js';

/** One page of a source, ready to be committed with `Store.commitSourcePage`. */
export interface SourcePage {
  deliveries: DeliveryRecord[];
  profiles: ProfileUpsert[];
  profileOptions: ProfileUpsertOptions;
  /** Progress to checkpoint (counters, checkpoint, row errors; `status: 'done'` on the last page). */
  patch: Partial<
    Pick<SourceJobRecord, 'status' | 'checkpoint' | 'rowsDone' | 'rowsFailed' | 'rowErrors' | 'error'>
  >;
  /** An import's rows with consent columns (`consent.*` mappings), applied once the page is committed. */
  consent?: ImportConsentRow[];
}

/** What an expander may use. */
export interface SourceEnv {
  ctx: BaseContext;
  /**
   * The source's mailing, with its content prepared; `null` for an audience import (a CSV source that
   * feeds a group and no mailing: `isAudienceImport`), whose pages hold profiles and no deliveries.
   */
  entry: { readonly mailing: MailingRecord } | null;
  now: Date;
}

/**
 * Expands one kind of source into deliveries, one page per call, resuming from `job.checkpoint`. The
 * worker commits each page (atomically with its checkpoint, fenced by the lease) and calls again, with
 * the job as it stands after that page, for as long as its time slice lasts. That call may come while
 * the page is still committing (the worker overlaps the two): a page must not rely on the store showing
 * the writes of the page before it.
 * A page must be a pure function of the job's checkpoint and the outside data, so that a page
 * recomputed after a crash (its commit lost) yields the same deliveries; duplicates are dropped by the
 * store's (mailing, address) key anyway.
 */
export interface SourceExpander {
  /** Expand the page after `job.checkpoint`. */
  expandPage(job: SourceJobRecord, env: SourceEnv): Promise<SourcePage>;
}
