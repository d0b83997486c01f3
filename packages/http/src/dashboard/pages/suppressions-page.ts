import type { SuppressionView } from '@mailroom/core';
import { html, type SafeHtml } from '../../pages/html.js';
import { pager, time } from '../fragments.js';
import { csrfField, layout, type PageContext } from '../layout.js';
import { query } from '../urls.js';

/** What the Suppressions page shows: one page of the list, the search, and what the last action did. */
export interface SuppressionsPageData {
  items: SuppressionView[];
  /** The search as typed. */
  q: string;
  /** The cursor of the next page, if any. */
  next: string | null;
  /** Whether this is a page after the first. */
  paged: boolean;
  notice?: string;
}

/**
 * The project's suppressed addresses with reason and date, a search by address, and a "Lift" button per
 * address (a form posting the address with the session's CSRF token).
 */
export function suppressionsPage(ctx: PageContext, data: SuppressionsPageData): SafeHtml {
  const here = `${ctx.root}/suppressions`;
  const rows = data.items.map(
    (s) =>
      html`<tr><td data-label="Address" class="mono">${s.address}</td><td data-label="Reason">${s.reason}</td><td data-label="Detail">${s.detail ?? ''}</td><td data-label="Since">${time(s.createdAt)}</td><td><form method="post" action="${here}/lift">${csrfField(ctx)}<input type="hidden" name="address" value="${s.address}"><button type="submit" class="small">Lift</button></form></td></tr>`,
  );
  const table =
    data.items.length === 0
      ? html`<p class="card muted">${data.q ? 'No suppressed address matches.' : 'No suppressed addresses.'}</p>`
      : html`<table class="cards"><thead><tr><th>Address</th><th>Reason</th><th>Detail</th><th>Since</th><th></th></tr></thead><tbody>${rows}</tbody></table>`;
  const search = html`<form method="get" action="${here}" class="card"><label>Address contains <input type="search" name="q" value="${data.q}"></label> <button type="submit" class="small">Search</button></form>`;
  const pages = pager(
    data.paged ? `${here}${query({ q: data.q })}` : null,
    data.next ? `${here}${query({ q: data.q, cursor: data.next })}` : null,
  );
  return layout(
    ctx,
    'Suppressions',
    'suppressions',
    html`<h1>Suppressions</h1>${data.notice ? html`<p class="card" role="status">${data.notice}</p>` : ''}<p class="muted">Suppressed addresses get no mail. Lifting one lets it be mailed again.</p>${search}${table}${pages}`,
  );
}
