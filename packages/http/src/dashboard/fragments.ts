import {
  DELIVERY_STATUSES,
  type DeliveryCounts,
  type MailingStatus,
  type MailingView,
  TERMINAL_DELIVERY_STATUSES,
} from '@mailroom/core';
import { html, type SafeHtml } from '../pages/html.js';

/** Pieces of markup that several pages share. */

const FINAL_STATUSES: readonly MailingStatus[] = ['completed', 'cancelled', 'failed'];

/** The delivery statuses in the order pages list them. */
export const DELIVERY_STATUS_ORDER = [
  'sent',
  'queued',
  'sending',
  'failed',
  'suppressed',
  'skipped',
  'bounced',
  'complained',
] as const;

/** How far a mailing is, as its progress endpoint reports it. */
export interface Progress {
  ref: string;
  status: MailingStatus;
  counts: DeliveryCounts;
  /** Deliveries so far. */
  total: number;
  /** Deliveries in a final status. */
  done: number;
  /** Whole percent of `done` over `total` (100 for a finished mailing without deliveries). */
  percent: number;
}

/** The progress of a mailing view. */
export function progressOf(view: MailingView): Progress {
  const c = view.counts;
  const total = DELIVERY_STATUSES.reduce((sum, s) => sum + c[s], 0);
  const done = TERMINAL_DELIVERY_STATUSES.reduce((sum, s) => sum + c[s], 0);
  const finished = FINAL_STATUSES.includes(view.status);
  const percent = total === 0 ? (finished ? 100 : 0) : Math.floor((done * 100) / total);
  return { ref: view.ref, status: view.status, counts: c, total, done, percent };
}

/** A UTC time, to the second, in a `<time>` element. */
export function time(date: Date | null | undefined): SafeHtml {
  if (!date) return html`<span class="muted">—</span>`;
  const iso = date.toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')} UTC</time>`;
}

/** A status as a coloured badge; `live` marks it for the progress script to update. */
export function badge(status: string, live = false): SafeHtml {
  return live
    ? html`<span class="badge ${status}" data-status-badge>${status}</span>`
    : html`<span class="badge ${status}">${status}</span>`;
}

/** A ref in monospace with a copy button. */
export function copyableRef(ref: string): SafeHtml {
  return html`<span class="ref"><code>${ref}</code><button type="button" class="small" data-copy="${ref}" aria-label="Copy ${ref}">Copy</button></span>`;
}

/** A progress bar the script keeps live (by polling `url`) while the mailing is not finished. */
export function progressBar(progress: Progress, url: string): SafeHtml {
  return html`<div class="progress" data-progress-url="${url}" data-status="${progress.status}"><progress max="100" value="${progress.percent}" aria-label="Progress">${progress.percent} %</progress><span data-percent>${progress.percent} %</span></div>`;
}

/** The delivery counts of a mailing, each updatable by the progress script. */
export function countsLine(counts: DeliveryCounts): SafeHtml {
  return html`<div class="counts">${DELIVERY_STATUS_ORDER.map(
    (status) => html`<span>${status} <b data-count="${status}">${counts[status]}</b></span>`,
  )}</div>`;
}

/** Previous/next links of a paged listing. */
export function pager(first: string | null, next: string | null): SafeHtml {
  if (!first && !next) return html``;
  return html`<div class="pager">${first && html`<a href="${first}">First page</a>`}${
    next && html`<a href="${next}" rel="next">Next page →</a>`
  }</div>`;
}
