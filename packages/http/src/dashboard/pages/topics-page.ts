import type { ConsentRecordView, ContactTopicView, TopicView } from '@mailroom/core';
import { html, type SafeHtml } from '../../pages/html.js';
import { time } from '../fragments.js';
import { layout, type PageContext } from '../layout.js';

/** A contact looked up on the topics page: its topic states and its consent timeline. */
export interface ContactConsent {
  address: string;
  /** Null when the project has no profile for the address (its history may still be kept, erased). */
  topics: ContactTopicView[] | null;
  /** Oldest first. */
  history: ConsentRecordView[];
  /** The cursor of the next page of the timeline, or null. */
  next: string | null;
}

/** What a record says, in words. */
function changeText(r: ConsentRecordView): string {
  switch (r.change) {
    case 'topic':
      return `${r.topic ?? '?'}: ${r.state ?? 'back to the default'}`;
    case 'unsubscribe':
      return r.topic
        ? `unsubscribed from everything (from topic ${r.topic})`
        : 'unsubscribed from everything';
    case 'resubscribe':
      return 'subscribed again';
    case 'sent-unsubscribed':
      return 'sent past consent (includeUnsubscribed)';
    case 'erasure':
      return 'erased';
    default:
      return r.change;
  }
}

/**
 * The project's topics (issue 38), and a contact's consent timeline: every change with its source, time,
 * IP, user agent and the broadcast it came from. Every value (names, descriptions, user agents) is
 * escaped by `html`.
 */
export function topicsPage(ctx: PageContext, topics: TopicView[], contact: ContactConsent | null): SafeHtml {
  const rows = topics.map(
    (t) =>
      html`<tr><td data-label="Key"><code>${t.key}</code></td><td data-label="Name">${t.name}${t.description ? html`<br><span class="muted">${t.description}</span>` : ''}</td><td data-label="Default">${t.default}</td><td data-label="Shown">${t.visibility}</td><td data-label="Updated">${time(t.updatedAt)}</td></tr>`,
  );
  const table =
    topics.length === 0
      ? html`<p class="card muted">No topics yet (<code>POST /topics</code>).</p>`
      : html`<table class="cards"><thead><tr><th>Key</th><th>Name</th><th>Default</th><th>Shown</th><th>Updated</th></tr></thead><tbody>${rows}</tbody></table>`;
  const search = html`<form method="get" action="${ctx.root}/topics" class="card"><label for="consent-address">A contact's consent timeline</label> <input id="consent-address" name="address" type="email" required value="${contact?.address ?? ''}"> <button type="submit">Show</button></form>`;
  return layout(
    ctx,
    'Topics',
    'topics',
    html`<h1>Topics</h1>${table}${search}${contact ? contactSection(ctx, contact) : ''}`,
  );
}

function contactSection(ctx: PageContext, c: ContactConsent): SafeHtml {
  const states =
    c.topics === null
      ? html`<p class="muted">No profile for this address in the project.</p>`
      : html`<ul>${c.topics.map((t) => html`<li><code>${t.key}</code> ${t.name}: <strong>${t.state}</strong>${t.explicit ? '' : html` <span class="muted">(default)</span>`}</li>`)}</ul>`;
  const events = c.history.map(
    (r) =>
      html`<tr><td data-label="When">${time(r.at)}</td><td data-label="Change">${changeText(r)}</td><td data-label="Source"><code>${r.source}</code></td><td data-label="From">${r.ip ?? ''}${r.userAgent ? html`<br><span class="muted">${r.userAgent}</span>` : ''}</td><td data-label="Broadcast">${r.mailingRef ? html`<a href="${ctx.root}/broadcasts/${r.mailingRef}">${r.mailingRef}</a>` : ''}</td></tr>`,
  );
  const timeline =
    c.history.length === 0
      ? html`<p class="muted">No consent records for this address.</p>`
      : html`<table class="cards"><thead><tr><th>When</th><th>Change</th><th>Source</th><th>From</th><th>Broadcast</th></tr></thead><tbody>${events}</tbody></table>`;
  const more = c.next
    ? html`<p><a href="${ctx.root}/topics?address=${encodeURIComponent(c.address)}&amp;after=${encodeURIComponent(c.next)}">Later records</a></p>`
    : '';
  return html`<section class="card"><h2>${c.address}</h2>${states}<h3>Consent timeline</h3>${timeline}${more}</section>`;
}
