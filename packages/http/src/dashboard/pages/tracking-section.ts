import type { DeliveryTracking, TrackingView } from '@mailroom/core';
import { html, type SafeHtml } from '../../pages/html.js';
import { time } from '../fragments.js';

/**
 * A mailing's opens and clicks: unique people and machines apart (mail-privacy proxies, link scanners),
 * and the links people clicked most. Nothing when nothing was recorded.
 */
export function trackingSection(view: TrackingView | undefined): SafeHtml {
  if (!view) return html``;
  const any = view.opens.human + view.opens.machine + view.clickTotals.human + view.clickTotals.machine > 0;
  if (!any) return html``;
  const rows = view.topLinks.map(
    (l) =>
      html`<tr data-link="${l.index}"><td data-label="Link" class="mono">${l.url}</td><td data-label="People" data-link-human>${l.human}</td><td data-label="Machines">${l.machine}</td></tr>`,
  );
  return html`<h2>Opens and clicks</h2><div class="card" data-tracking><dl class="facts"><dt>Unique opens</dt><dd><b data-opens-human>${view.opens.human}</b> by people, <span data-opens-machine>${view.opens.machine}</span> by machines</dd><dt>Unique clicks</dt><dd><b data-clicks-human>${view.clicks.human}</b> by people, <span data-clicks-machine>${view.clicks.machine}</span> by machines</dd><dt>All clicks</dt><dd>${view.clickTotals.human} by people, ${view.clickTotals.machine} by machines</dd></dl>${
    rows.length > 0 &&
    html`<table class="cards"><thead><tr><th>Top links</th><th>People</th><th>Machines</th></tr></thead><tbody>${rows}</tbody></table>`
  }<p class="muted">Machines: mail-privacy proxies that fetch images unread, and link scanners.</p></div>`;
}

/** One delivery's opens and clicks, people and machines apart; nothing when there is none. */
export function deliveryTrackingSection(tracking: DeliveryTracking | undefined): SafeHtml {
  if (!tracking || (tracking.opens.length === 0 && tracking.clicks.length === 0)) return html``;
  const who = (machine: boolean) => (machine ? 'a machine' : 'a person');
  const opens = tracking.opens.map(
    (o) =>
      html`<li data-open="${o.machine ? 'machine' : 'human'}">opened by ${who(o.machine)} ${o.count} time${o.count === 1 ? '' : 's'}, first ${time(o.firstAt)}, last ${time(o.lastAt)}</li>`,
  );
  const clicks = tracking.clicks.map(
    (c) =>
      html`<tr data-click="${c.machine ? 'machine' : 'human'}"><td data-label="Link" class="mono">${c.url}</td><td data-label="By">${who(c.machine)}</td><td data-label="At">${time(c.at)}</td></tr>`,
  );
  return html`<h2>Opens and clicks</h2><div class="card" data-delivery-tracking>${opens.length > 0 && html`<ul>${opens}</ul>`}${
    clicks.length > 0 &&
    html`<table class="cards"><thead><tr><th>Link</th><th>By</th><th>At</th></tr></thead><tbody>${clicks}</tbody></table>`
  }</div>`;
}
