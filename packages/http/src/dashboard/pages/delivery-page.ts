import {
  BOUNCE_REASONS,
  type DeliveryRecord,
  type DeliveryTracking,
  type EventView,
  type InboundSignalRecord,
  isBounceReason,
  type MailingView,
  sentVia,
} from '@mailroom/core';
import { html, type SafeHtml } from '../../pages/html.js';
import { badge, time } from '../fragments.js';
import { layout, type PageContext } from '../layout.js';
import { deliveryPreviewUrl, mailingUrl, sectionOf } from '../urls.js';
import { repliesSection } from './inbound-page.js';
import { deliveryTrackingSection } from './tracking-section.js';

/**
 * One delivery: its attempts and last reply, the transport that sent it, and the message as sent when
 * its content was kept.
 */
export function deliveryPage(
  ctx: PageContext,
  view: MailingView,
  delivery: DeliveryRecord,
  events: EventView[] = [],
  signals: readonly InboundSignalRecord[] = [],
  tracking?: DeliveryTracking,
): SafeHtml {
  const eventList =
    events.length === 0
      ? html`<h2>Events</h2><p class="card muted">No events yet.</p>`
      : html`<h2>Events</h2><table class="cards"><thead><tr><th>When</th><th>Event</th><th>Reply or reason</th></tr></thead><tbody>${events.map(
          (e) =>
            html`<tr><td>${time(new Date(e.created_at))}</td><td><code>${e.type}</code></td><td class="mono">${e.data.response ?? e.data.error ?? e.data.reason ?? ''}</td></tr>`,
        )}</tbody></table>`;
  const back = mailingUrl(ctx.root, view.kind, view.ref);
  const content = delivery.content;
  // Routed and API transports name themselves in the stored reply (`ses: 250 Ok ...`).
  const via = delivery.status === 'sent' ? sentVia(delivery.lastResponse) : undefined;
  const preview = content
    ? html`<h2>Message</h2><div class="card"><dl class="facts"><dt>Subject</dt><dd>${content.subject}</dd></dl></div>${
        content.html !== null &&
        html`<iframe class="preview" title="Message preview" sandbox="" referrerpolicy="no-referrer" src="${deliveryPreviewUrl(ctx.root, view.kind, view.ref, delivery.address)}"></iframe>`
      }<details${content.html === null ? html` open` : ''}><summary>Text version</summary><pre>${content.text}</pre></details>`
    : html`<h2>Message</h2><p class="card muted">The content of this message was not kept (the broadcast did not ask for <code>storeContent</code>, it is not sent yet, or it was pruned).</p>`;
  const reports =
    signals.length > 0 &&
    html`<h2>Bounces and complaints</h2><table><thead><tr><th>Received</th><th>Kind</th><th>Reason</th><th>Source</th><th>Status</th><th>Diagnostic</th></tr></thead><tbody>${signals.map(
      (s) =>
        html`<tr><td data-label="Received">${time(s.createdAt)}</td><td data-label="Kind">${s.kind}</td><td data-label="Reason"><code title="${reasonMeaning(s.reason)}">${s.reason ?? ''}</code></td><td data-label="Source">${s.source}</td><td data-label="Status" class="mono">${s.status ?? ''}</td><td data-label="Diagnostic" class="mono">${s.diagnostic ?? ''}${
          (s.reportedAddress || s.reportedMessageId) &&
          html`<div class="muted">reported for ${[s.reportedAddress, s.reportedMessageId].filter(Boolean).join(', ')}</div>`
        }</td></tr>`,
    )}</tbody></table>`;
  return layout(
    ctx,
    delivery.address,
    sectionOf(view.kind),
    html`<p class="muted"><a href="${back}">${view.subject || view.ref}</a> /</p><h1>${delivery.address}</h1><div class="card"><dl class="facts"><dt>Name</dt><dd>${delivery.name}</dd><dt>Status</dt><dd>${badge(delivery.status)}</dd><dt>Attempts</dt><dd>${delivery.attempts}</dd><dt>Last reply</dt><dd class="mono">${delivery.lastResponse ?? '—'}</dd><dt>${delivery.status === 'bounced' || delivery.status === 'complained' ? 'Diagnostic' : 'Last error'}</dt><dd class="mono">${delivery.lastError ?? '—'}</dd><dt>Sent</dt><dd>${time(delivery.sentAt)}</dd>${via !== undefined && html`<dt>Sent via</dt><dd>${via}</dd>`}<dt>Next attempt</dt><dd>${delivery.status === 'queued' ? time(delivery.nextAttemptAt) : '—'}</dd><dt>Message-ID</dt><dd class="mono">${delivery.messageId}</dd></dl></div>${repliesSection(
      ctx,
      events.filter((e) => e.type === 'email.replied'),
    )}${deliveryTrackingSection(tracking)}${reports}${eventList}${preview}`,
  );
}

function reasonMeaning(reason: string | null): string {
  return reason && isBounceReason(reason) ? BOUNCE_REASONS[reason].description : '';
}
