import type { MailroomError, UnsubscribeTarget } from '@mailroom/core';
import type { NeutralResponse } from '../neutral/types.js';
import { errorPage } from './error-page.js';
import { html, raw, type SafeHtml } from './html.js';

/**
 * The small HTML pages of the one-click unsubscribe link: a confirmation page with a button (GET, which
 * never changes anything, so a link scanner or prefetcher cannot unsubscribe anyone), the result of the
 * POST, and the refusal of a bad link. They load nothing from elsewhere and send no referrer, so the token
 * in the URL goes nowhere.
 */

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-robots-tag': 'noindex',
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
} as const;

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f6f4;color:#222}' +
  'main{max-width:28rem;margin:12vh auto;padding:2rem;background:#fff;border-radius:8px}' +
  'h1{font-size:1.4rem;margin-top:0}button{font:inherit;padding:.6rem 1.2rem;border:0;border-radius:6px;' +
  'background:#222;color:#fff;cursor:pointer}.muted{color:#666;font-size:.9rem}' +
  'button.secondary{background:#fff;color:#222;border:1px solid #222}';

/**
 * GET: asks to confirm, with a form that POSTs the RFC 8058 body to the same URL. A topic broadcast's page
 * offers leaving that topic, and a second form leaving everything (`?everything=1`). Topic and project
 * names are the project's text: escaped like every value (`html`).
 */
export function confirmPage(requestId: string, target: UnsubscribeTarget, token: string): NeutralResponse {
  // The forms' actions are relative to /unsubscribe/, so they post back to this very URL wherever the
  // adapter is mounted.
  const action = encodeURIComponent(token);
  const oneClick = html`<input type="hidden" name="List-Unsubscribe" value="One-Click">`;
  const everything = html`<form method="post" action="${action}?everything=1">${oneClick}<button type="submit" class="secondary">Unsubscribe from everything</button></form>`;
  const body = target.topic
    ? html`<h1>Unsubscribe</h1><p>Stop sending <strong>${target.topic.name}</strong> from <strong>${target.projectName}</strong> to <strong>${maskAddress(target.address)}</strong>?</p><form method="post" action="${action}">${oneClick}<button type="submit">Unsubscribe from ${target.topic.name}</button></form><p class="muted">Or stop every broadcast from ${target.projectName}:</p>${everything}`
    : html`<h1>Unsubscribe</h1><p>Stop sending broadcasts from <strong>${target.projectName}</strong> to <strong>${maskAddress(target.address)}</strong>?</p><form method="post" action="${action}">${oneClick}<button type="submit">Unsubscribe</button></form>`;
  return respond(200, requestId, shell('Unsubscribe', body));
}

/** POST: done (also on a repeat: unsubscribing is idempotent). */
export function donePage(requestId: string, target: UnsubscribeTarget, everything = false): NeutralResponse {
  const topic = everything ? null : target.topic;
  const text = topic
    ? html`<p><strong>${maskAddress(target.address)}</strong> will receive no more <strong>${topic.name}</strong> from <strong>${target.projectName}</strong>.</p>`
    : html`<p><strong>${maskAddress(target.address)}</strong> will receive no more broadcasts from <strong>${target.projectName}</strong>.</p>`;
  return respond(200, requestId, shell('You are unsubscribed', html`<h1>You are unsubscribed</h1>${text}`));
}

/** A refused link (forged, altered or unknown token): the package's error page, with the error's status. */
export function refusedLinkPage(requestId: string, error: MailroomError): NeutralResponse {
  const text = error.status === 404 ? 'This unsubscribe link is not valid.' : error.message;
  const page = errorPage(shell, error.status, requestId, { title: 'Unsubscribe', text });
  return respond(error.status, requestId, page);
}

/** The page around a content: no script, and the style inline (the CSP allows nothing else). */
function shell(title: string, content: SafeHtml): SafeHtml {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title><style>${raw(STYLE)}</style></head><body><main>${content}</main></body></html>`;
}

function respond(status: number, requestId: string, page: SafeHtml): NeutralResponse {
  return { status, headers: { ...PAGE_HEADERS, 'x-request-id': requestId }, body: page.value };
}

/** `a***@example.com`: enough for the owner to recognize, not the whole address for whoever the link reaches. */
function maskAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${address.slice(0, 1)}***${address.slice(at)}`;
}
