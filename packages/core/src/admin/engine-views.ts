import type {
  DeliveryRecord,
  MailingKind,
  MailingStatus,
  SourceJobStatus,
  SourceKind,
} from '../store/records.js';
import type { DeliveryCounts } from '../store/store.js';

export type { SourcePageEvent } from '../delivery/delivery-events.js';
export type { TemplateSample, TemplateView } from '../resources/resource-types.js';
export type { Page } from '../store/paging.js';

/**
 * What the engine's read methods answer (the dashboard, an embedding app's own pages): plain data scoped to
 * the authenticated project, without store ids, so nothing here can name another project's rows.
 */

/** A delivery as listed: its record without the store's bookkeeping (ids, lease). */
export type DeliveryView = Pick<
  DeliveryRecord,
  | 'address'
  | 'name'
  | 'status'
  | 'attempts'
  | 'nextAttemptAt'
  | 'messageId'
  | 'lastResponse'
  | 'lastError'
  | 'sentAt'
  | 'createdAt'
  | 'updatedAt'
> & {
  /** Whether the rendered content was kept (`storeContent`), to be read with `getDelivery`. */
  hasContent: boolean;
};

/** A filter over a mailing's deliveries, by address. */
export interface DeliverySearch {
  /** Only addresses starting with this text (the domain part compared lower-cased). */
  prefix?: string;
  /** Only deliveries of this status. */
  status?: DeliveryRecord['status'];
  /** The `next` cursor of the previous page. */
  after?: string;
  /** Page size, at most 500. @default 50 */
  limit?: number;
}

/** A source job of a broadcast (an audience group or a CSV file being expanded) and its progress. */
export interface SourceJobView {
  kind: SourceKind;
  /** The audience group's ref, or the CSV source's label. */
  name: string;
  /** The CSV file's URL without its query string (which may carry a token); null for audience groups. */
  url: string | null;
  status: SourceJobStatus;
  rowsDone: number;
  rowsFailed: number;
  /** Failed rows (capped by the expander), with their line numbers. */
  rowErrors: Array<{ line: number; reason: string }>;
  /** Why the whole job failed, if it did. */
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** An audience group of the project with its member count. */
export interface AudienceGroupView {
  ref: string;
  name: string | null;
  /** A form signup joins only once confirmed from the mailed link (double opt-in). */
  doubleOptIn: boolean;
  members: number;
  createdAt: Date;
}

/**
 * The deliveries waiting across the installation (every project), for metrics. Counted over the mailings
 * that are not finished, among the newest `scanLimit` mailings of each kind of each project: an estimate
 * that costs a bounded number of store reads, not an exact count.
 */
export interface QueueDepth {
  /** `queued` deliveries of mailings that are not scheduled: due now or waiting for a retry. */
  due: number;
  /** `queued` deliveries of scheduled mailings. */
  scheduled: number;
  /** Deliveries a worker holds right now. */
  sending: number;
  /** The earliest `nextAttemptAt` of a queued delivery (from `Store.nextDueAt`), if any. */
  oldestDueAt: Date | null;
}

/** The payload of the `broadcast:progress` event: a mailing's delivery counts at one moment. */
export interface MailingProgress {
  projectId: string;
  ref: string;
  kind: MailingKind;
  status: MailingStatus;
  counts: DeliveryCounts;
  /** Deliveries so far, in every status (grows while sources expand and batches arrive). */
  total: number;
  /** Deliveries in a terminal status (sent, failed, suppressed, skipped). */
  done: number;
}
