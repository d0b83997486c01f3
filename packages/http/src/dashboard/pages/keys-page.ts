import type { KeyView } from '@mailroom/core';
import { html, type SafeHtml } from '../../pages/html.js';
import { badge, time } from '../fragments.js';
import { csrfField, layout, type PageContext } from '../layout.js';

/** What the Keys page shows. */
export interface KeysPageData {
  keys: KeyView[];
  /** The id of the key the session signed in with: revoking it ends the dashboard's access too. */
  currentKeyId: string | undefined;
  /** A line to confirm what the last action did. */
  notice?: string;
}

/**
 * The project's API keys (name, prefix, scope, sender domains, state, created, last used; never a secret), with a
 * "Revoke" button per key still in use. New keys are made with `mailroom key create` or `POST /keys`.
 */
export function keysPage(ctx: PageContext, data: KeysPageData): SafeHtml {
  const rows = data.keys.map((k) => {
    const usable = k.state === 'active' || k.state === 'expiring';
    const revoke = usable
      ? html`<form method="post" action="${ctx.root}/keys/${k.id}/revoke">${csrfField(ctx)}<button type="submit" class="small">Revoke</button></form>`
      : '';
    const current = k.id === data.currentKeyId ? html` <span class="muted">(this session)</span>` : '';
    const name = k.name ? html`<strong>${k.name}</strong><br>` : '';
    return html`<tr><td>${name}<span class="mono">${k.prefix}…</span><br><span class="muted mono">${k.id}</span>${current}</td><td>${k.scope}</td><td>${k.domains.length > 0 ? k.domains.join(', ') : 'any sender'}</td><td>${badge(k.state)}${k.state === 'expiring' ? html` <span class="muted">until</span> ${time(k.expiresAt)}` : ''}</td><td>${time(k.createdAt)}</td><td>${k.lastUsedAt ? time(k.lastUsedAt) : 'never'}</td><td>${revoke}</td></tr>`;
  });
  return layout(
    ctx,
    'Keys',
    'keys',
    html`<h1>Keys</h1>${data.notice ? html`<p class="card" role="status">${data.notice}</p>` : ''}<p class="muted">Make a key with <code>mailroom key create --project ID --scope full|sending|read --name NAME</code> or <code>POST /keys</code>; its secret is shown once.</p><table class="cards"><thead><tr><th>Key</th><th>Scope</th><th>Senders</th><th>State</th><th>Created</th><th>Last used</th><th></th></tr></thead><tbody>${rows}</tbody></table>`,
  );
}
