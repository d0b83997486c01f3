import type {
  ActivityChart,
  DeliveryStatus,
  DeliveryView,
  DomainBounces,
  MailingView,
  Page,
  SourceJobView,
  TrackingView,
} from '@mailroom/core';
import { html, raw, type SafeHtml } from '../../pages/html.js';
import { activitySection } from '../activity-chart.js';
import {
  badge,
  copyableRef,
  countsLine,
  DELIVERY_STATUS_ORDER,
  pager,
  progressBar,
  progressOf,
  time,
} from '../fragments.js';
import { csrfField, layout, type PageContext } from '../layout.js';
import { deliveryUrl, mailingUrl, progressUrl, query, sectionOf } from '../urls.js';
import { bouncesSection } from './bounces-section.js';
import { trackingSection } from './tracking-section.js';

/** Row errors shown per source; the store keeps a capped list anyway. */
const ROW_ERRORS_SHOWN = 50;

/** What the deliveries listing was asked for. */
export interface DeliveryFilter {
  prefix: string;
  status: DeliveryStatus | undefined;
  after: string | undefined;
}

/** One broadcast or message: facts, live progress, sources with their row errors, searchable deliveries. */
export function mailingPage(
  ctx: PageContext,
  view: MailingView,
  sources: SourceJobView[],
  deliveries: Page<DeliveryView>,
  filter: DeliveryFilter,
  tracking?: TrackingView,
  bounces: readonly DomainBounces[] = [],
  activity?: ActivityChart,
  /** A broadcast's pause state and its Pause or Resume button (pauses-page.ts). */
  pauseControls?: SafeHtml,
  /** The replies received to it (inbound-page.ts `repliesSection`), after the facts. */
  replies?: SafeHtml,
): SafeHtml {
  const progress = progressOf(view);
  const self = mailingUrl(ctx.root, view.kind, view.ref);
  const cancellable = view.kind === 'broadcast' && ['scheduled', 'queued', 'sending'].includes(view.status);
  const facts = html`<div class="card" data-mailing><dl class="facts"><dt>Ref</dt><dd>${copyableRef(view.ref)}</dd><dt>Status</dt><dd>${badge(view.status, true)}</dd><dt>Sender</dt><dd>${view.sender.name} &lt;${view.sender.address}&gt;</dd><dt>Created</dt><dd>${time(view.createdAt)}</dd><dt>Scheduled</dt><dd>${time(view.scheduleFor)}</dd><dt>Batches</dt><dd>${view.batchCount}</dd><dt>Deliveries</dt><dd><b data-count-total>${progress.total}</b>${countsLine(view.counts)}</dd><dt>Progress</dt><dd>${progressBar(progress, progressUrl(ctx.root, view.kind, view.ref))}</dd>${waitingFacts(view)}</dl>${
    cancellable &&
    html`<form method="post" action="${self}/cancel">${csrfField(ctx)}<p><button type="submit" class="danger">Cancel this broadcast</button></p></form>`
  }${pauseControls}</div>`;
  const title = view.subject || '(no subject)';
  return layout(
    ctx,
    title,
    sectionOf(view.kind),
    html`<p class="muted"><a href="${ctx.root}/${sectionOf(view.kind)}">${view.kind === 'broadcast' ? 'Broadcasts' : 'Messages'}</a> /</p><h1>${title}</h1>${facts}${replies}${activity && activitySection(activity)}${trackingSection(tracking)}${bouncesSection(bounces, 'The deliveries of this mailing.')}${
      view.kind === 'broadcast' && sourcesSection(sources)
    }${deliveriesSection(ctx, view, deliveries, filter)}`,
  );
}

/**
 * A broadcast sent at local times or in a window: what waits for which hour (UTC), as the API's `waiting`
 * says it; nothing for other mailings or when nothing waits.
 */
function waitingFacts(view: MailingView): SafeHtml | undefined {
  if (!view.waiting || view.waiting.length === 0) return undefined;
  const rows = view.waiting.map(
    (w) => html`<li data-waiting-hour="${w.hour.toISOString()}">${time(w.hour)}: <b>${w.count}</b></li>`,
  );
  return html`<dt>Waiting</dt><dd><ul class="plain" data-waiting>${rows}</ul><span class="muted">by the UTC hour each delivery is due (local times and sending windows)</span></dd>`;
}

function sourcesSection(sources: SourceJobView[]): SafeHtml {
  if (sources.length === 0)
    return html`<h2>Sources</h2><p class="card muted">Recipients were given inline only.</p>`;
  const rows = sources.map(
    (s) =>
      html`<tr><td data-label="Kind">${s.kind === 'csv' ? 'CSV file' : 'Audience group'}</td><td data-label="Name">${s.name}${
        s.url && html`<div class="muted mono">${s.url}</div>`
      }</td><td data-label="Status">${badge(s.status)}</td><td data-label="Rows">${s.rowsDone}</td><td data-label="Failed rows">${s.rowsFailed}</td><td data-label="Updated">${time(s.updatedAt)}</td></tr>${
        (s.error || s.rowErrors.length > 0) &&
        html`<tr><td colspan="6" data-label="Errors">${s.error && html`<p class="notice error">${s.error}</p>`}${
          s.rowErrors.length > 0 &&
          html`<details><summary>${s.rowErrors.length} row error${s.rowErrors.length === 1 ? '' : 's'}</summary><ul>${s.rowErrors
            .slice(0, ROW_ERRORS_SHOWN)
            .map((e) => html`<li>line ${e.line}: ${e.reason}</li>`)}</ul></details>`
        }</td></tr>`
      }`,
  );
  return html`<h2>Sources</h2><table class="cards"><thead><tr><th>Kind</th><th>Name</th><th>Status</th><th>Rows</th><th>Failed rows</th><th>Updated</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function deliveriesSection(
  ctx: PageContext,
  view: MailingView,
  page: Page<DeliveryView>,
  filter: DeliveryFilter,
): SafeHtml {
  const self = mailingUrl(ctx.root, view.kind, view.ref);
  const options = DELIVERY_STATUS_ORDER.map(
    (s) => html`<option value="${s}"${s === filter.status ? raw(' selected') : ''}>${s}</option>`,
  );
  const form = html`<form class="search" method="get" action="${self}" role="search"><input type="search" name="q" value="${filter.prefix}" placeholder="Address starts with…" aria-label="Address starts with"><select name="status" aria-label="Status"><option value="">any status</option>${options}</select><button type="submit">Search</button></form>`;
  const rows = page.items.map(
    (d) =>
      html`<tr><td data-label="Address"><a href="${deliveryUrl(ctx.root, view.kind, view.ref, d.address)}">${d.address}</a><div class="muted">${d.name}</div></td><td data-label="Status">${badge(d.status)}</td><td data-label="Attempts">${d.attempts}</td><td data-label="Last reply" class="mono">${lastWord(d)}</td><td data-label="Sent">${time(d.sentAt)}</td></tr>`,
  );
  const table =
    page.items.length === 0
      ? html`<p class="card muted">No delivery matches.</p>`
      : html`<table class="cards"><thead><tr><th>Address</th><th>Status</th><th>Attempts</th><th>Last reply</th><th>Sent</th></tr></thead><tbody>${rows}</tbody></table>`;
  const keep = { q: filter.prefix, status: filter.status };
  const first = filter.after ? `${self}${query(keep)}` : null;
  const next = page.next ? `${self}${query({ ...keep, after: page.next })}` : null;
  return html`<h2>Deliveries</h2>${form}${table}${pager(first, next)}`;
}

/** What the row shows as the last word on a delivery: a bounce's or complaint's diagnostic outranks the relay's 250. */
function lastWord(d: { status: string; lastResponse: string | null; lastError: string | null }): string {
  if (d.status === 'bounced' || d.status === 'complained') return d.lastError ?? d.lastResponse ?? '';
  return d.lastResponse ?? d.lastError ?? '';
}
