import type { TrackingView } from '@mailroom/core';
import { html, type SafeHtml } from '../html.js';

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
