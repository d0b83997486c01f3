import type { ConfirmationTarget, MailroomError } from '@mailroom/core';
import type { NeutralResponse } from '../neutral/types.js';
import { escapeHtml, html, raw, type SafeHtml } from './html.js';
import { SIGNUP_STRINGS_EN, type SignupStrings } from './signup-strings.js';

/**
 * The small HTML pages of public signups (issue 38): the thanks after a form's plain POST, and the
 * confirmation link's pages. A GET of the link only shows a button (a link scanner or prefetcher confirms
 * nothing); the button POSTs back to the same URL. An expired link offers "send a new link". Every value
 * of the project (its name, topic and group names) is escaped; the pages load nothing from elsewhere and
 * send no referrer, so the token in the URL goes nowhere.
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
  'background:#222;color:#fff;cursor:pointer}button:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}';

/** After a plain (non-JavaScript) form POST: the same page whatever the address (no enumeration). */
export function thanksPage(requestId: string, t: SignupStrings = SIGNUP_STRINGS_EN): NeutralResponse {
  return respond(
    200,
    requestId,
    shell(t, t.thanksTitle, html`<h1>${t.thanksTitle}</h1><p>${t.thanksText}</p>`),
  );
}

/** The link's page: a button to confirm (pending), done (confirmed) or "send a new link" (expired). */
export function confirmationPage(
  requestId: string,
  target: ConfirmationTarget,
  token: string,
  t: SignupStrings = SIGNUP_STRINGS_EN,
): NeutralResponse {
  // The forms' actions are relative to /confirm/, so they post back under this URL wherever it is mounted.
  const action = encodeURIComponent(token);
  if (target.state === 'expired') {
    const body = html`<h1>${t.expiredTitle}</h1><p>${t.expiredText}</p><form method="post" action="${action}/resend"><button type="submit">${t.resendButton}</button></form>`;
    return respond(410, requestId, shell(t, t.expiredTitle, body));
  }
  if (target.state === 'confirmed') {
    const body = html`<h1>${t.confirmedTitle}</h1><p>${sentence(t.confirmedText, target, t)}</p>`;
    return respond(200, requestId, shell(t, t.confirmedTitle, body));
  }
  const body = html`<h1>${t.confirmTitle}</h1><p>${sentence(t.confirmText, target, t)}</p><form method="post" action="${action}"><button type="submit">${t.confirmButton}</button></form>`;
  return respond(200, requestId, shell(t, t.confirmTitle, body));
}

/** After "send a new link": the same page whether or not a message went out (at most one per interval). */
export function resentPage(
  requestId: string,
  target: ConfirmationTarget,
  t: SignupStrings = SIGNUP_STRINGS_EN,
): NeutralResponse {
  const text = t.resentText.replace('{address}', maskAddress(target.address));
  return respond(200, requestId, shell(t, t.resentTitle, html`<h1>${t.resentTitle}</h1><p>${text}</p>`));
}

/** A refused link (forged, foreign, altered): 404, one answer for every way a token can be wrong. */
export function invalidLinkPage(
  requestId: string,
  error: MailroomError,
  t: SignupStrings = SIGNUP_STRINGS_EN,
): NeutralResponse {
  const text = error.status === 404 ? t.invalidText : error.message;
  return respond(
    error.status,
    requestId,
    shell(t, t.invalidTitle, html`<h1>${t.invalidTitle}</h1><p>${text}</p>`),
  );
}

/** A sentence with the masked address and the project's names in bold, each escaped. */
function sentence(template: string, target: ConfirmationTarget, t: SignupStrings): SafeHtml {
  const what = target.topicName ?? target.groupName ?? t.theirMail;
  const values: Record<string, string> = {
    address: maskAddress(target.address),
    what,
    project: target.projectName,
  };
  const escaped = escapeHtml(template).replace(/\{(\w+)\}/g, (whole, name: string) =>
    values[name] === undefined ? whole : `<strong>${escapeHtml(values[name])}</strong>`,
  );
  return raw(escaped);
}

function shell(t: SignupStrings, title: string, content: SafeHtml): SafeHtml {
  return html`<!doctype html><html lang="${t.lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${title}</title><style>${raw(STYLE)}</style></head><body><main>${content}</main></body></html>`;
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
