import type { DeliveryCounts, MailingStatus } from '@mailroom/core';
import { TERMINAL_DELIVERY_STATUSES } from '@mailroom/core';

/** Deliveries that reached an outcome, and all deliveries known so far. */
export function progressOf(counts: DeliveryCounts): { done: number; total: number } {
  let done = 0;
  let total = 0;
  for (const [status, count] of Object.entries(counts) as Array<[keyof DeliveryCounts, number]>) {
    total += count;
    if (TERMINAL_DELIVERY_STATUSES.includes(status)) done += count;
  }
  return { done, total };
}

/** The counts as `sent 12, failed 1, queued 3`, leaving out zeros (`no deliveries` when all are zero). */
export function formatCounts(counts: DeliveryCounts): string {
  const parts = Object.entries(counts)
    .filter(([, count]) => count > 0)
    .map(([status, count]) => `${status} ${count}`);
  return parts.length > 0 ? parts.join(', ') : 'no deliveries';
}

/**
 * One line of a progress bar: `[########----------]  45%  112/250  sending  sent 110, failed 2`.
 * A mailing with no delivery yet shows an empty bar at 0 %.
 */
export function renderProgressBar(counts: DeliveryCounts, status: MailingStatus, width = 30): string {
  const { done, total } = progressOf(counts);
  const ratio = total === 0 ? 0 : done / total;
  const filled = Math.round(ratio * width);
  const percent = `${Math.floor(ratio * 100)}%`.padStart(4);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${percent}  ${done}/${total}  ${status}  ${formatCounts(counts)}`;
}
