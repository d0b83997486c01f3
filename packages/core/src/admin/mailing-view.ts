import type { DeliveryCounts, WaitingHour } from '../store/mailing-store.js';
import type { MailingRecord, MailingStatus } from '../store/records.js';

/** A mailing with its delivery counts. */
export interface MailingView {
  ref: string;
  kind: MailingRecord['kind'];
  status: MailingStatus;
  subject: string;
  sender: MailingRecord['sender'];
  createdAt: Date;
  scheduleFor: Date | null;
  batchCount: number;
  counts: DeliveryCounts;
  /**
   * How late a scheduled mailing started, in milliseconds: its first sent message minus the time it was due
   * (`scheduleFor`, or the accept time if that was later). While nothing is sent yet and that time has passed
   * (no worker ran), how overdue it is now. A few hundred milliseconds is the worker's poll; more means no
   * worker was running at the time: the mailing is still sent, late, never dropped. Null without a
   * `scheduleFor`, or when it is not due yet.
   */
  lateByMs: number | null;
  /**
   * A broadcast sent at local times or in a sending window: its deliveries not yet due, by the UTC hour
   * they wait for (earliest first). Absent for other mailings, and on a store without `countWaitingByHour`.
   */
  waiting?: WaitingHour[];
}
