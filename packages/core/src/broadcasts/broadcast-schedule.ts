import { MailroomError } from '../base/errors.js';
import type { BaseContext } from '../context/base-context.js';
import { DATE_TIME_RULE, parseDateTime } from '../request/dates.js';
import type { MailingStore } from '../store/mailing-store.js';
import type { MailingRecord, MailingStatus } from '../store/records.js';

/**
 * Scheduling after accept: cancelling and rescheduling a broadcast, and how late a scheduled one started.
 *
 * Grace policy: a broadcast is due at its `scheduleFor` (deliveries carry it as `nextAttemptAt`), and a worker
 * sends it as soon as it runs at or after that time, however late: an accepted broadcast is never dropped for
 * lateness. How late it started is kept in its deliveries' `sentAt` and reported as `lateByMs`.
 */

/** Statuses a broadcast can be cancelled from. */
const CANCELLABLE: readonly MailingStatus[] = ['scheduled', 'queued', 'sending'];

/** The reason written on the deliveries a cancel skips. */
export const CANCELLED_REASON = 'broadcast cancelled';

/**
 * Cancels a broadcast: status `cancelled` (claims stop at once), then its waiting deliveries are settled as
 * `skipped`. A repeat settles what a worker handed back meanwhile. `BROADCAST_CLOSED` when it already ended.
 */
export async function cancelBroadcast(ctx: BaseContext, mailing: MailingRecord): Promise<void> {
  const now = ctx.clock.now();
  const outbox = await ctx.outbox.forMailing('broadcast.cancelled', mailing, now);
  const changed = await ctx.store.setMailingStatus(mailing.id, CANCELLABLE, 'cancelled', now, outbox);
  if (!changed) {
    const current = await ctx.store.getMailingById(mailing.id);
    if (current?.status !== 'cancelled') {
      throw new MailroomError(
        'BROADCAST_CLOSED',
        `Broadcast ${mailing.ref} is ${current?.status ?? 'gone'}; there is nothing to cancel`,
      );
    }
  }
  await ctx.store.settleOpenDeliveries(mailing.id, 'skipped', CANCELLED_REASON, now);
}

/**
 * Moves a scheduled broadcast to `when`. A time not in the future makes it due now, and is recorded as now
 * (so that `lateByMs` measures the worker, not the past time given). `BROADCAST_CLOSED` if not scheduled.
 */
export async function rescheduleBroadcast(
  ctx: BaseContext,
  mailing: MailingRecord,
  when: Date,
): Promise<void> {
  const now = ctx.clock.now();
  if (mailing.content.plan) {
    // Its deliveries each have their own time (local time, window): one new time for all would lose them.
    throw new MailroomError(
      'BROADCAST_CLOSED',
      `Broadcast ${mailing.ref} is sent at each recipient's local time; it cannot be rescheduled as a whole (cancel it and send it again)`,
    );
  }
  const future = when.getTime() > now.getTime();
  const status = future ? 'scheduled' : 'queued';
  if (!(await ctx.store.rescheduleMailing(mailing.id, future ? when : now, status, now))) {
    const current = await ctx.store.getMailingById(mailing.id);
    throw new MailroomError(
      'BROADCAST_CLOSED',
      `Broadcast ${mailing.ref} is ${current?.status ?? 'gone'}; only a scheduled broadcast can be rescheduled`,
    );
  }
}

/**
 * After a later batch of a broadcast that was scheduled when the batch read it: if a reschedule landed in
 * between, the batch's deliveries carry the old time; move them to the broadcast's current one.
 */
export async function realignScheduledBatch(
  ctx: Pick<BaseContext, 'clock'> & { store: Pick<MailingStore, 'getMailingById' | 'rescheduleMailing'> },
  read: MailingRecord,
): Promise<void> {
  const current = await ctx.store.getMailingById(read.id);
  const before = read.options.scheduleFor?.getTime();
  const after = current?.options.scheduleFor;
  if (current?.status !== 'scheduled' || !after || after.getTime() === before) return;
  await ctx.store.rescheduleMailing(current.id, after, 'scheduled', ctx.clock.now());
}

/** `lateByMs` of the mailing view (see `MailingView`). */
export async function latenessOf(ctx: BaseContext, mailing: MailingRecord): Promise<number | null> {
  const scheduled = mailing.options.scheduleFor;
  if (!scheduled) return null;
  const due = Math.max(scheduled.getTime(), mailing.createdAt.getTime());
  const first = await ctx.store.firstSentAt(mailing.id);
  if (first) return Math.max(0, first.getTime() - due);
  const now = ctx.clock.now().getTime();
  const waiting =
    mailing.status === 'scheduled' || mailing.status === 'queued' || mailing.status === 'sending';
  return waiting && now > due ? now - due : null;
}

/** A new schedule time: a `Date`, or an ISO-8601 date-time with `Z` or an offset; `VALIDATION_FAILED` otherwise. */
export function parseScheduleTime(value: unknown): Date {
  const fail = (message: string) =>
    new MailroomError('VALIDATION_FAILED', message, {
      issues: [{ code: 'custom', path: ['scheduleFor'], message }],
    });
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw fail('scheduleFor is an invalid Date');
    return new Date(value);
  }
  if (typeof value !== 'string') throw fail(DATE_TIME_RULE);
  const parsed = parseDateTime(value);
  if (!parsed.ok) throw fail(parsed.reason);
  return parsed.date;
}
