import type { EventView, InboundAddress, InboundMail, ReceivingRouteView } from '@mailroom/core';
import { html, type SafeHtml } from '../../pages/html.js';
import { badge, copyableRef, pager, time } from '../fragments.js';
import { layout, type PageContext } from '../layout.js';
import { deliveryUrl, mailingUrl, query } from '../urls.js';

/** A received message's page. */
export function inboundMessageUrl(root: string, id: string): string {
  return `${root}/inbound/${encodeURIComponent(id)}`;
}

/** The inbound page's listing, as asked for. */
export interface InboundListing {
  routes: ReceivingRouteView[];
  messages: InboundMail[];
  /** The id this page starts before (a later page), if any. */
  before: string | undefined;
  next: string | null;
}

/** An address as `Name <address>`, or the address alone. */
function who(a: InboundAddress | null | undefined): string {
  if (!a) return '';
  return a.name ? `${a.name} <${a.address}>` : a.address;
}

function whoList(list: readonly InboundAddress[]): string {
  return list.map(who).join(', ');
}

/** SPF, DKIM, DMARC and ARC as badges (pass green, fail red, the rest grey). */
function authBadges(auth: InboundMail['auth'] | undefined): SafeHtml {
  if (!auth) return html`<span class="muted">—</span>`;
  const one = (name: string, result: string) =>
    html`<span class="badge ${result === 'pass' ? 'active' : result === 'fail' ? 'failed' : 'skipped'}" data-auth-${name}="${result}">${name} ${result}</span> `;
  return html`${one('spf', auth.spf)}${one('dkim', auth.dkim)}${one('dmarc', auth.dmarc)}${one('arc', auth.arc)}`;
}

function destinationText(r: ReceivingRouteView): string {
  const d = r.destination;
  return d.kind === 'webhook'
    ? `webhook ${d.endpointId}`
    : d.kind === 'handler'
      ? 'in-process handler (onInbound)'
      : 'store only';
}

/**
 * Receiving mail (issue 40): the receiving domains (from the routes) with the MX record to publish, the
 * routes and their destinations, and the received messages, newest first, with their authentication
 * results and the delivery each answers. Every header value is the sender's text: escaped by `html`.
 */
export function inboundPage(ctx: PageContext, listing: InboundListing): SafeHtml {
  const domains = [...new Set(listing.routes.map((r) => r.domain))].sort();
  const domainRows = domains.map(
    (d) =>
      html`<tr data-receiving-domain="${d}"><td data-label="Domain"><code>${d}</code></td><td data-label="Routes">${listing.routes.filter((r) => r.domain === d).length}</td><td data-label="Record to publish"><code>${d} MX 10 your-listener-host.</code></td></tr>`,
  );
  const domainTable =
    domains.length === 0
      ? html`<p class="card muted">No receiving domain yet: add a route (<code>POST /inbound/routes</code> or <code>mailroom route add</code>).</p>`
      : html`<table class="cards"><thead><tr><th>Domain</th><th>Routes</th><th>Record to publish</th></tr></thead><tbody>${domainRows}</tbody></table><p class="muted">The listener's host needs an A record too; docs/inbound-routes.md lists every record.</p>`;
  const routeRows = listing.routes.map(
    (r) =>
      html`<tr data-route="${r.id}"><td data-label="Address"><code>${r.pattern}@${r.domain}</code></td><td data-label="Destination">${destinationText(r)}</td><td data-label="Id" class="mono">${r.id}</td><td data-label="Created">${time(new Date(r.created_at))}</td></tr>`,
  );
  const routeTable =
    listing.routes.length === 0
      ? html`<p class="card muted">No routes: mail to this project's addresses is refused (550 5.1.1).</p>`
      : html`<table class="cards"><thead><tr><th>Address</th><th>Destination</th><th>Id</th><th>Created</th></tr></thead><tbody>${routeRows}</tbody></table>`;
  const self = `${ctx.root}/inbound`;
  const messageRows = listing.messages.map(
    (m) =>
      html`<tr data-inbound="${m.id}"><td data-label="Received">${time(new Date(m.received_at))}</td><td data-label="From">${who(m.from) || m.envelope.from}</td><td data-label="To">${m.envelope.to.join(', ')}</td><td data-label="Subject"><a href="${inboundMessageUrl(ctx.root, m.id)}">${m.subject || '(no subject)'}</a>${
        m.replied_to && html`<div class="muted">reply to ${m.replied_to.mailing.ref}</div>`
      }</td><td data-label="Authentication">${authBadges(m.auth)}</td><td data-label="Attachments">${m.attachments.length}</td></tr>`,
  );
  const messageTable =
    listing.messages.length === 0
      ? html`<p class="card muted">No received messages.</p>`
      : html`<table class="cards"><thead><tr><th>Received</th><th>From</th><th>To</th><th>Subject</th><th>Authentication</th><th>Attachments</th></tr></thead><tbody>${messageRows}</tbody></table>`;
  const first = listing.before ? self : null;
  const next = listing.next ? `${self}${query({ before: listing.next })}` : null;
  return layout(
    ctx,
    'Inbound',
    'inbound',
    html`<h1>Inbound</h1><p><a href="${ctx.root}/inbound/settings" data-inbound-settings>Receiving settings</a> <span class="muted">(retention, size cap, reply addresses)</span></p><h2>Receiving domains</h2>${domainTable}<h2>Routes</h2>${routeTable}<h2>Received messages</h2>${messageTable}${pager(first, next)}`,
  );
}

/** One received message: envelope, parsed fields, authentication and spam verdicts, the reply link, bodies, attachments and headers. */
export function inboundMessagePage(ctx: PageContext, m: InboundMail): SafeHtml {
  const r = m.replied_to;
  const replied = r
    ? html`<a href="${deliveryUrl(ctx.root, r.mailing.kind, r.mailing.ref, r.address)}" data-replied-to="${r.mailing.ref}">${r.address}</a> of <a href="${mailingUrl(ctx.root, r.mailing.kind, r.mailing.ref)}">${r.mailing.ref}</a>`
    : html`<span class="muted">not a reply to a message sent from here</span>`;
  const spam = m.spam
    ? html`${badge(m.spam.spam ? 'failed' : 'active')} ${m.spam.spam ? 'spam' : 'not spam'}${m.spam.score === undefined ? '' : ` (score ${m.spam.score})`}${m.spam.reason ? html` <span class="muted">${m.spam.reason}</span>` : ''}`
    : html`<span class="muted">no verdict</span>`;
  const facts = html`<div class="card"><dl class="facts"><dt>Id</dt><dd>${copyableRef(m.id)}</dd><dt>Received</dt><dd>${time(new Date(m.received_at))}</dd><dt>Envelope</dt><dd class="mono">from ${m.envelope.from || '<>'} to ${m.envelope.to.join(', ')} (client ${m.envelope.remote_address})</dd><dt>From</dt><dd>${who(m.from)}</dd><dt>To</dt><dd>${whoList(m.to)}</dd>${m.cc.length > 0 && html`<dt>Cc</dt><dd>${whoList(m.cc)}</dd>`}${m.reply_to.length > 0 && html`<dt>Reply-To</dt><dd>${whoList(m.reply_to)}</dd>`}<dt>Date</dt><dd>${m.date ? time(new Date(m.date)) : html`<span class="muted">—</span>`}</dd><dt>Message-ID</dt><dd class="mono">${m.message_id ?? ''}</dd>${m.in_reply_to && html`<dt>In-Reply-To</dt><dd class="mono">${m.in_reply_to}</dd>`}<dt>Authentication</dt><dd>${authBadges(m.auth)}</dd><dt>Spam</dt><dd>${spam}</dd><dt>Reply to</dt><dd>${replied}</dd><dt>Route</dt><dd class="mono">${m.route_id}</dd></dl></div>`;
  const stripped =
    m.stripped_text !== null && m.stripped_text !== m.text
      ? html`<h2>Reply text</h2><pre class="card" data-stripped>${m.stripped_text}</pre>`
      : '';
  const body = html`<h2>Text</h2>${
    m.text === null
      ? html`<p class="card muted">No text part.</p>`
      : html`<pre class="card" data-text>${m.text}</pre>`
  }${m.html !== null && html`<details class="card"><summary>HTML source</summary><pre>${m.html}</pre></details>`}`;
  const attachments =
    m.attachments.length === 0
      ? html`<p class="card muted">No attachments.</p>`
      : html`<table class="cards" data-attachments><thead><tr><th>Name</th><th>Type</th><th>Size</th><th>Content-ID</th><th>Link</th></tr></thead><tbody>${m.attachments.map(
          (a) =>
            html`<tr data-attachment><td data-label="Name">${a.filename ?? html`<span class="muted">(none)</span>`}</td><td data-label="Type" class="mono">${a.content_type}</td><td data-label="Size">${a.size} bytes</td><td data-label="Content-ID" class="mono">${a.content_id ?? ''}</td><td data-label="Link">${attachmentLink(a)}</td></tr>`,
        )}</tbody></table>`;
  const headers = html`<details class="card"><summary>${m.headers.length} headers</summary><pre>${m.headers.map(([name, value]) => `${name}: ${value}\n`).join('')}</pre></details>`;
  const authHeader = m.auth?.header
    ? html`<details class="card"><summary>Authentication-Results</summary><pre>${m.auth.header}</pre></details>`
    : '';
  const title = m.subject || '(no subject)';
  return layout(
    ctx,
    title,
    'inbound',
    html`<p class="muted"><a href="${ctx.root}/inbound">Inbound</a> /</p><h1>${title}</h1>${facts}${stripped}${body}<h2>Attachments</h2>${attachments}<h2>Headers</h2>${headers}${authHeader}`,
  );
}

/**
 * An attachment's signed URL (no key needed: whoever has the link downloads it until it expires), as a
 * download link with its expiry and a copy button; without the engine's `receiving.baseUrl` there is none.
 */
function attachmentLink(a: InboundMail['attachments'][number]): SafeHtml {
  if (!a.url) {
    return html`<span class="muted">no link: the engine has no <code>receiving.baseUrl</code></span>`;
  }
  const expires = a.url_expires_at
    ? html`<div class="muted">expires ${time(new Date(a.url_expires_at))}</div>`
    : '';
  return html`<a href="${a.url}" download data-attachment-url>Download</a> <button type="button" class="small" data-copy="${a.url}" aria-label="Copy the link">Copy link</button>${expires}`;
}

/** The replies received to a mailing (its `email.replied` events), for the mailing's page. */
export function repliesSection(ctx: PageContext, replies: readonly EventView[]): SafeHtml {
  if (replies.length === 0) return html``;
  const rows = replies.map((e) => {
    const inbound = (e.data as { inbound?: Partial<InboundMail> }).inbound ?? {};
    const delivery = (e.data as { delivery?: { address?: string } }).delivery ?? {};
    const text = inbound.stripped_text ?? inbound.text ?? '';
    return html`<tr data-reply="${inbound.id ?? ''}"><td data-label="Received">${time(new Date(e.created_at))}</td><td data-label="Recipient">${delivery.address ?? ''}</td><td data-label="Reply">${
      inbound.id
        ? html`<a href="${inboundMessageUrl(ctx.root, inbound.id)}">${inbound.subject || '(no subject)'}</a>`
        : (inbound.subject ?? '')
    }<div class="muted">${text.length > 200 ? `${text.slice(0, 199)}…` : text}</div></td></tr>`;
  });
  return html`<h2>Replies</h2><table class="cards" data-replies><thead><tr><th>Received</th><th>Recipient</th><th>Reply</th></tr></thead><tbody>${rows}</tbody></table>`;
}
