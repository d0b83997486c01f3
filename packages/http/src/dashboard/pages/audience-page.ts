import type { AudienceGroupView } from '@mailroom/core';
import { html, type SafeHtml } from '../../pages/html.js';
import { time } from '../fragments.js';
import { layout, type PageContext } from '../layout.js';

/** The project's audience groups with their member counts. */
export function audiencePage(ctx: PageContext, groups: AudienceGroupView[]): SafeHtml {
  const rows = groups.map(
    (g) =>
      html`<tr><td data-label="Ref"><code>${g.ref}</code></td><td data-label="Name">${g.name ?? ''}</td><td data-label="Members">${g.members}</td><td data-label="Created">${time(g.createdAt)}</td></tr>`,
  );
  const table =
    groups.length === 0
      ? html`<p class="card muted">No audience groups yet.</p>`
      : html`<table class="cards"><thead><tr><th>Ref</th><th>Name</th><th>Members</th><th>Created</th></tr></thead><tbody>${rows}</tbody></table>`;
  return layout(ctx, 'Audience', 'audience', html`<h1>Audience groups</h1>${table}`);
}
