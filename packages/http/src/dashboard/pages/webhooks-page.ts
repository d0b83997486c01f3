import type { WebhookAttemptRecord, WebhookEndpointView, WebhookMessageView } from '@mailroom/core';
import { html, type SafeHtml } from '../../pages/html.js';
import { badge, time } from '../fragments.js';
import { csrfField, layout, type PageContext } from '../layout.js';

/** What the Webhooks page shows. */
export interface WebhooksPageData {
  endpoints: WebhookEndpointView[];
  attempts: WebhookAttemptRecord[];
  failed: WebhookMessageView[];
  /** A line to confirm what the last action did. */
  notice?: string;
}

/**
 * The project's webhook endpoints with their state (healthy, circuit open until when, or why disabled), recent attempts with status code and latency,
 * "send a test event" and "enable"/"disable" buttons per endpoint, and "replay" of failed messages.
 */
export function webhooksPage(ctx: PageContext, data: WebhooksPageData): SafeHtml {
  const urlOf = new Map(data.endpoints.map((e) => [e.id, e.url]));
  const endpoints =
    data.endpoints.length === 0
      ? html`<p class="card muted">No endpoints. Add one with <code>mailroom webhook add --project ID --url URL</code> or <code>POST /webhooks</code>.</p>`
      : html`<table class="cards"><thead><tr><th>URL</th><th>Events</th><th>State</th><th>Failing since</th><th></th></tr></thead><tbody>${data.endpoints.map(
          (e) =>
            html`<tr><td class="mono">${e.url}<br><span class="muted">${e.id}</span></td><td>${e.events?.join(', ') ?? 'all'}</td><td>${endpointState(e)}</td><td>${time(e.failingSince)}</td><td><form method="post" action="${ctx.root}/webhooks/${e.id}/test">${csrfField(ctx)}<button type="submit" class="small">Send a test event</button></form><form method="post" action="${ctx.root}/webhooks/${e.id}/${e.enabled ? 'disable' : 'enable'}">${csrfField(ctx)}<button type="submit" class="small">${e.enabled ? 'Disable' : 'Enable'}</button></form></td></tr>`,
        )}</tbody></table>`;
  const attempts =
    data.attempts.length === 0
      ? html`<p class="card muted">No attempts yet.</p>`
      : html`<table class="cards"><thead><tr><th>When</th><th>Endpoint</th><th>Event</th><th>Attempt</th><th>Status</th><th>Latency</th><th>Error</th></tr></thead><tbody>${data.attempts.map(
          (a) =>
            html`<tr><td>${time(a.createdAt)}</td><td class="mono">${urlOf.get(a.endpointId) ?? a.endpointId}</td><td>${a.eventType}<br><span class="muted mono">${a.messageId}</span></td><td>${a.attempt}</td><td>${a.statusCode === null ? '—' : badge(a.statusCode < 300 ? 'sent' : 'failed', false)} ${a.statusCode ?? ''}</td><td>${Math.round(a.latencyMs)} ms</td><td class="mono">${a.error ?? ''}</td></tr>`,
        )}</tbody></table>`;
  const failed =
    data.failed.length === 0
      ? html`<p class="card muted">No failed messages.</p>`
      : html`<table class="cards"><thead><tr><th>Message</th><th>Event</th><th>Attempts</th><th>Last status</th><th>Last error</th><th></th></tr></thead><tbody>${data.failed.map(
          (m) =>
            html`<tr><td class="mono">${m.id}</td><td>${m.eventType}</td><td>${m.attempts}</td><td>${m.lastStatusCode ?? '—'}</td><td class="mono">${m.lastError ?? ''}</td><td><form method="post" action="${ctx.root}/webhooks/messages/${m.id}/replay">${csrfField(ctx)}<button type="submit" class="small">Replay</button></form></td></tr>`,
        )}</tbody></table>`;
  return layout(
    ctx,
    'Webhooks',
    'webhooks',
    html`<h1>Webhooks</h1>${data.notice ? html`<p class="card" role="status">${data.notice}</p>` : ''}<h2>Endpoints</h2>${endpoints}<h2>Recent attempts</h2>${attempts}<h2>Failed messages</h2>${failed}`,
  );
}

/** An endpoint's state: healthy; circuit open until a time (or its probe due, once that passed); disabled, and why. */
function endpointState(e: WebhookEndpointView): SafeHtml {
  if (e.state === 'disabled') {
    return html`${badge('disabled')} <span class="muted">${e.disabledReason ?? ''}</span>`;
  }
  if (e.state === 'circuit_open' && e.circuitOpenUntil) {
    const waiting = e.circuitOpenUntil.getTime() > Date.now();
    return html`${badge('circuit_open')} <span class="muted">${waiting ? 'until' : 'probing since'}</span> ${time(e.circuitOpenUntil)}`;
  }
  return badge('healthy');
}
