import { MAX_PAUSE_MINUTES, MAX_PAUSE_REASON, type MailingView, type PauseView } from '@mailroom/core';
import { html, type SafeHtml } from '../../pages/html.js';
import { time } from '../fragments.js';
import { csrfField, layout, type PageContext } from '../layout.js';
import { mailingUrl } from '../urls.js';

/** What the Pauses page shows: the pauses in force, and what the last action did. */
export interface PausesPageData {
  pauses: PauseView[];
  notice?: string;
}

/**
 * The project's pauses in force (what, who paused it, why, the guard's rule with its figures, since and until
 * when), each with a Resume button; a button to pause or resume the whole sending, and a form to pause a
 * destination. Every button is a form posting the session's CSRF token.
 */
export function pausesPage(ctx: PageContext, data: PausesPageData): SafeHtml {
  const here = `${ctx.root}/pauses`;
  const sendingPaused = data.pauses.some((p) => p.scope === 'project');
  const rows = data.pauses.map(
    (p) =>
      html`<tr data-pause="${p.scope}:${p.target}"><td data-label="Paused">${what(ctx, p)}</td><td data-label="By">${p.by === 'guard' ? 'reputation guard' : 'operator'}</td><td data-label="Why">${p.reason ?? ''}${p.rule && html`<div class="muted" data-rule>${ruleLine(p.rule)}</div>`}</td><td data-label="Since">${time(p.createdAt)}</td><td data-label="Until">${p.until ? time(p.until) : 'resumed by hand'}</td><td>${resumeForm(ctx, p)}</td></tr>`,
  );
  const table =
    data.pauses.length === 0
      ? html`<p class="card muted" data-no-pauses>Nothing is paused.</p>`
      : html`<table class="cards"><thead><tr><th>Paused</th><th>By</th><th>Why</th><th>Since</th><th>Until</th><th></th></tr></thead><tbody>${rows}</tbody></table>`;
  const sending = sendingPaused
    ? html`<form method="post" action="${here}/sending/resume" class="card">${csrfField(ctx)}<p>The whole sending of the project is paused.</p><button type="submit">Resume sending</button></form>`
    : html`<form method="post" action="${here}/sending/pause" class="card">${csrfField(ctx)}<p>Pausing the sending holds back every delivery of the project (broadcasts and messages); they are still accepted.</p><label>Reason <input type="text" name="reason" maxlength="${MAX_PAUSE_REASON}"></label> <button type="submit" class="danger">Pause sending</button></form>`;
  const destination = html`<form method="post" action="${here}/destination/pause" class="card" data-pause-destination>${csrfField(ctx)}<p>Pause the deliveries to one destination: a recipient domain, or a group name with its domains.</p><label>Destination <input type="text" name="name" required placeholder="gmail.com"></label> <label>Domains <input type="text" name="domains" placeholder="outlook.com, hotmail.com"></label> <label>Minutes <input type="number" name="minutes" min="1" max="${MAX_PAUSE_MINUTES}" placeholder="e.g. 30"></label> <label>Reason <input type="text" name="reason" maxlength="${MAX_PAUSE_REASON}"></label> <button type="submit">Pause destination</button></form>`;
  return layout(
    ctx,
    'Pauses',
    'pauses',
    html`<h1>Pauses</h1>${data.notice ? html`<p class="card" role="status">${data.notice}</p>` : ''}<p class="muted">While paused, deliveries in flight finish and no other is sent; resuming continues where it stopped, none sent twice.</p>${table}<h2>Sending</h2>${sending}<h2>Destinations</h2>${destination}`,
  );
}

/**
 * The pause controls of a broadcast's page: its pause (who, why, the rule) with a Resume button, or a Pause
 * button while it may still send.
 */
export function broadcastPauseControls(
  ctx: PageContext,
  view: MailingView,
  pauses: PauseView[],
  notice?: string,
): SafeHtml {
  return html`${notice && html`<p class="notice" role="status">${notice}</p>`}${controls(ctx, view, pauses)}`;
}

function controls(ctx: PageContext, view: MailingView, pauses: PauseView[]): SafeHtml {
  const self = mailingUrl(ctx.root, 'broadcast', view.ref);
  const pause = pauses.find((p) => p.scope === 'broadcast' && p.target === view.ref);
  const sending = pauses.find((p) => p.scope === 'project');
  const note =
    sending &&
    html`<p class="notice" data-sending-paused>The project's whole sending is paused: <a href="${ctx.root}/pauses">Pauses</a>.</p>`;
  if (pause) {
    return html`<form method="post" action="${self}/resume" data-broadcast-paused>${csrfField(ctx)}<p class="notice">Paused by ${pause.by === 'guard' ? 'the reputation guard' : 'an operator'} ${time(pause.createdAt)}${pause.reason ? html`: ${pause.reason}` : ''}${pause.rule && html`<br><span class="muted">${ruleLine(pause.rule)}</span>`}</p><p><button type="submit">Resume this broadcast</button></p></form>${note}`;
  }
  if (view.status === 'cancelled' || view.status === 'failed') return note || html``;
  return html`<form method="post" action="${self}/pause">${csrfField(ctx)}<p><label>Reason <input type="text" name="reason" maxlength="${MAX_PAUSE_REASON}"></label> <button type="submit">Pause this broadcast</button></p></form>${note}`;
}

function what(ctx: PageContext, p: PauseView): SafeHtml {
  if (p.scope === 'broadcast') {
    return html`Broadcast <a href="${mailingUrl(ctx.root, 'broadcast', p.target)}" class="mono">${p.target}</a>`;
  }
  if (p.scope === 'project') return html`The whole sending`;
  const domains = p.domains.length === 1 && p.domains[0] === p.target ? '' : ` (${p.domains.join(', ')})`;
  return html`Destination <span class="mono">${p.target}</span>${domains}`;
}

function resumeForm(ctx: PageContext, p: PauseView): SafeHtml {
  const action =
    p.scope === 'broadcast'
      ? `${mailingUrl(ctx.root, 'broadcast', p.target)}/resume`
      : p.scope === 'project'
        ? `${ctx.root}/pauses/sending/resume`
        : `${ctx.root}/pauses/destination/resume`;
  return html`<form method="post" action="${action}">${csrfField(ctx)}${p.scope === 'destination' && html`<input type="hidden" name="name" value="${p.target}">`}<input type="hidden" name="back" value="pauses"><button type="submit" class="small">Resume</button></form>`;
}

/** A guard rule in words, with its figures: `broadcast.sender-side: 12 sender-side of 80 attempts (15.0% > 10.0%, minimum 5)`. */
function ruleLine(rule: NonNullable<PauseView['rule']>): string {
  const window =
    rule.windowMs === null ? 'over the broadcast' : `over ${Math.round(rule.windowMs / 60_000)} min`;
  return `${rule.name}: ${rule.count} ${rule.signal} of ${rule.attempts} attempts ${window} (${percent(rule.rate)} > ${percent(rule.threshold)}, minimum ${rule.minimum})`;
}

function percent(rate: number): string {
  return `${(rate * 100).toFixed(1)}%`;
}
