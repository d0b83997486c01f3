import type { EventType } from '../store/event-records.js';
import type { DeliveryRecord, InboundSignalRecord, Json } from '../store/records.js';
import type { MailingView } from './mailing-view.js';

/** One event of a recipient's timeline. */
export interface TimelineEntry {
  /** The event's id (`evt_...`), as `GET /events` and webhooks name it. */
  id: string;
  type: EventType;
  at: Date;
  /** What the event says besides who it is about: the reply, the error, the bounce, the URL... */
  details: Record<string, Json>;
}

/** One recipient of a message: where its delivery stands and what happened to it, oldest first. */
export interface RecipientStatusView {
  address: string;
  name: string;
  /**
   * The subject this recipient gets: the one kept with its content (`storeContent`), else the mailing's
   * subject rendered now with the recipient's data (the mailing's `subject` is the Liquid source, such as
   * `Hello {{ recipient.firstName }}`); the source itself if it cannot be rendered.
   */
  subject: string;
  status: DeliveryRecord['status'];
  attempts: number;
  /** The RFC 5322 Message-ID it is sent with (the same on every attempt). */
  messageId: string;
  nextAttemptAt: Date;
  sentAt: Date | null;
  lastResponse: string | null;
  lastError: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** Its events (sent, delayed, failed, bounced, opened...), oldest first, at most 100. */
  timeline: TimelineEntry[];
  /** The bounce and complaint reports received about it, oldest first. */
  reports: Array<Pick<InboundSignalRecord, 'kind' | 'source' | 'reason' | 'status' | 'createdAt'>>;
}

/** A message (or, by Message-ID, the one recipient it names) with each recipient's status. */
export interface MessageStatusView extends MailingView {
  recipients: RecipientStatusView[];
  /** More recipients than listed (a message lists at most 100; read the rest with `searchDeliveries`). */
  more: boolean;
}
