import type { PageFrame } from '../pages/error-page.js';
import { html, raw, type SafeHtml } from '../pages/html.js';
import { DASHBOARD_CSS, DASHBOARD_JS } from './assets.js';

/** The sections of the navigation. */
export type Section =
  | 'broadcasts'
  | 'messages'
  | 'templates'
  | 'audience'
  | 'topics'
  | 'automations'
  | 'inbound'
  | 'suppressions'
  | 'webhooks'
  | 'domains'
  | 'keys'
  | 'pauses';

const SECTIONS: ReadonlyArray<{ id: Section; label: string }> = [
  { id: 'broadcasts', label: 'Broadcasts' },
  { id: 'messages', label: 'Messages' },
  { id: 'templates', label: 'Templates' },
  { id: 'audience', label: 'Audience' },
  { id: 'topics', label: 'Topics' },
  { id: 'automations', label: 'Automations' },
  { id: 'inbound', label: 'Inbound' },
  { id: 'suppressions', label: 'Suppressions' },
  { id: 'webhooks', label: 'Webhooks' },
  { id: 'domains', label: 'Domains' },
  { id: 'keys', label: 'Keys' },
  { id: 'pauses', label: 'Pauses' },
];

/** What every page of a signed-in user knows. */
export interface PageContext {
  /** URL of the dashboard root (mount point and prefix), without a trailing slash. */
  root: string;
  /** The project signed in to. */
  projectName: string;
  /** The session's CSRF token, put in every form that posts. */
  csrfToken: string;
  /** The nonce of this response's inline style and script. */
  nonce: string;
}

/** A whole page of a signed-in user: header with navigation and sign-out, then `content`. */
export function layout(
  ctx: PageContext,
  title: string,
  section: Section | null,
  content: SafeHtml,
): SafeHtml {
  const nav = SECTIONS.map(
    (s) =>
      html`<a href="${ctx.root}/${s.id}"${s.id === section ? raw(' aria-current="page"') : ''}>${s.label}</a>`,
  );
  return shell(
    ctx.nonce,
    title,
    html`<header class="top"><a class="brand" href="${ctx.root}/broadcasts">Mailroom</a><span class="project">${ctx.projectName}</span><nav aria-label="Sections">${nav}</nav><form method="post" action="${ctx.root}/sign-out">${csrfField(ctx)}<button type="submit">Sign out</button></form></header><main>${content}</main>`,
  );
}

/** A page without navigation (sign-in). */
export function bareLayout(nonce: string, title: string, content: SafeHtml): SafeHtml {
  return shell(nonce, title, html`<main>${content}</main>`);
}

/** The frame of a page that may be shown signed in or not (an error): the layout, else the bare one. */
export function frameOf(nonce: string, ctx: PageContext | undefined): PageFrame {
  return (title, content) => (ctx ? layout(ctx, title, null, content) : bareLayout(nonce, title, content));
}

/** The hidden field carrying the session's CSRF token. */
export function csrfField(ctx: PageContext): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${ctx.csrfToken}">`;
}

function shell(nonce: string, title: string, body: SafeHtml): SafeHtml {
  return html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="same-origin"><title>${title} · Mailroom</title><style nonce="${nonce}">${raw(DASHBOARD_CSS)}</style></head><body>${body}<script nonce="${nonce}">${raw(DASHBOARD_JS)}</script></body></html>`;
}
