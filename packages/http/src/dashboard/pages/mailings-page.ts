import type { ActivityChart, DomainBounces, MailingKind, MailingView, Page } from '@mailroom/core';
import { html, type SafeHtml } from '../../pages/html.js';
import { activitySection } from '../activity-chart.js';
import { destinationPicker } from '../activity-destination.js';
import { badge, copyableRef, countsLine, pager, progressBar, progressOf, time } from '../fragments.js';
import { layout, type PageContext } from '../layout.js';
import { mailingUrl, progressUrl, query, sectionOf } from '../urls.js';
import { bouncesSection } from './bounces-section.js';

/** The project's broadcasts (or single messages), newest first, each with live counts and progress. */
export function mailingsPage(
  ctx: PageContext,
  kind: MailingKind,
  page: Page<MailingView>,
  paged: boolean,
  bounces: readonly DomainBounces[] = [],
  activity?: ActivityChart,
): SafeHtml {
  const section = sectionOf(kind);
  const title = kind === 'broadcast' ? 'Broadcasts' : 'Messages';
  const base = `${ctx.root}/${section}`;
  const rows = page.items.map((m) => {
    const progress = progressOf(m);
    const url = mailingUrl(ctx.root, kind, m.ref);
    return html`<tr data-mailing><td data-label="Ref">${copyableRef(m.ref)}</td><td data-label="Subject"><a href="${url}">${m.subject || '(no subject)'}</a></td><td data-label="Status">${badge(m.status, true)}</td><td data-label="Created">${time(m.createdAt)}</td><td data-label="Scheduled">${time(m.scheduleFor)}</td><td data-label="Deliveries">${countsLine(m.counts)}</td><td data-label="Progress">${progressBar(progress, progressUrl(ctx.root, kind, m.ref))}</td></tr>`;
  });
  const empty =
    kind === 'broadcast'
      ? 'No broadcasts yet. Start one with POST /send/mail/broadcast.'
      : 'No messages yet. Send one with POST /send/mail.';
  const table =
    page.items.length === 0
      ? html`<p class="card muted">${empty}</p>`
      : html`<table class="cards"><thead><tr><th>Ref</th><th>Subject</th><th>Status</th><th>Created</th><th>Scheduled</th><th>Deliveries</th><th>Progress</th></tr></thead><tbody>${rows}</tbody></table>`;
  const next = page.next ? `${base}${query({ after: page.next })}` : null;
  const recent =
    kind === 'broadcast' && !paged ? bouncesSection(bounces, 'The project, last 7 days.') : html``;
  return layout(
    ctx,
    title,
    section,
    html`<h1>${title}</h1>${
      activity &&
      activitySection(activity, {
        title: activity.destination
          ? `Activity to ${activity.destination.name}, last 24 hours`
          : 'Activity, last 24 hours',
        controls: destinationPicker(
          base,
          activity.destination?.name,
          bounces.map((b) => b.domain),
        ),
      })
    }${recent}${table}${pager(paged ? base : null, next)}`,
  );
}
