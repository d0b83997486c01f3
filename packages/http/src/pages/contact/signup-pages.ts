import type { ConfirmationTarget, MailroomError, SignupBrand } from '@mailroom/core';
import type { NeutralResponse } from '../../neutral/types.js';
import { escapeHtml, html, raw, type SafeHtml } from '../html.js';
import { type ContactBrand, contactPage, contactResponse, maskAddress } from './contact-layout.js';
import { type ContactPageStrings, stringsFor } from './strings/index.js';

/**
 * The pages of public signups (issue 38), on the preference centre's layout (`contact-layout.ts`): the
 * project's name, colour and logo, the strings of the contact's language. The thanks after a form's plain
 * POST, and the confirmation link's pages: a GET of the link only shows a button (a link scanner or
 * prefetcher confirms nothing); the button POSTs back to the same URL; an expired link offers "send a new
 * link". Every value of the project (its name, topic and group names) is escaped.
 *
 * The language: the contact's `locale` trait on a link's pages; where the contact may not be looked up
 * (the thanks page, which must read the same for every address) or is not known (a refused link), the
 * browser's `Accept-Language`.
 */

/** After a plain (non-JavaScript) form POST: the same page whatever the address (no enumeration). */
export function thanksPage(requestId: string, brand: SignupBrand, acceptLanguage?: string): NeutralResponse {
  const t = stringsFor(primaryLanguage(acceptLanguage));
  const body = html`<h1>${t.thanksTitle}</h1><p>${t.thanksText}</p>`;
  return contactResponse(200, requestId, contactPage(t, brand, t.thanksTitle, body));
}

/** The link's page: a button to confirm (pending), done (confirmed) or "send a new link" (expired). */
export function confirmationPage(
  requestId: string,
  target: ConfirmationTarget,
  token: string,
): NeutralResponse {
  const t = stringsFor(target.locale);
  const brand = brandOf(target);
  // The forms' actions are relative to /confirm/, so they post back under this URL wherever it is mounted.
  const action = encodeURIComponent(token);
  if (target.state === 'expired') {
    const body = html`<h1>${t.expiredTitle}</h1><p>${t.expiredText}</p><form method="post" action="${action}/resend"><button type="submit">${t.resendButton}</button></form>`;
    return contactResponse(410, requestId, contactPage(t, brand, t.expiredTitle, body));
  }
  if (target.state === 'confirmed') {
    const body = html`<h1>${t.confirmedTitle}</h1><p class="status" role="status">${sentence(t.confirmedText, target, t)}</p>`;
    return contactResponse(200, requestId, contactPage(t, brand, t.confirmedTitle, body));
  }
  const body = html`<h1>${t.confirmTitle}</h1><p>${sentence(t.confirmText, target, t)}</p><form method="post" action="${action}"><button type="submit">${t.confirmButton}</button></form>`;
  return contactResponse(200, requestId, contactPage(t, brand, t.confirmTitle, body));
}

/** After "send a new link": the same page whether or not a message went out (at most one per interval). */
export function resentPage(requestId: string, target: ConfirmationTarget): NeutralResponse {
  const t = stringsFor(target.locale);
  const body = html`<h1>${t.resentTitle}</h1><p class="status" role="status">${sentence(t.resentText, target, t)}</p>`;
  return contactResponse(200, requestId, contactPage(t, brandOf(target), t.resentTitle, body));
}

/** A refused link (forged, foreign, altered): 404, one answer for every way a token can be wrong. */
export function invalidLinkPage(
  requestId: string,
  error: MailroomError,
  acceptLanguage?: string,
): NeutralResponse {
  const t = stringsFor(primaryLanguage(acceptLanguage));
  // The project is not known from a refused link: the pages' own name.
  const brand: ContactBrand = { projectName: 'Mailroom', color: null, logo: null };
  const text = error.status === 404 ? t.confirmInvalidText : error.message;
  const body = html`<h1>${t.confirmInvalidTitle}</h1><p>${text}</p>`;
  return contactResponse(error.status, requestId, contactPage(t, brand, t.confirmInvalidTitle, body));
}

function brandOf(target: ConfirmationTarget): ContactBrand {
  return { projectName: target.projectName, color: target.color, logo: target.logo };
}

/** A sentence with the masked address and the project's names in bold, each escaped. */
function sentence(template: string, target: ConfirmationTarget, t: ContactPageStrings): SafeHtml {
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

/** The first language of an `Accept-Language` header (`de-CH,de;q=0.9,en;q=0.8` is `de-CH`), if any. */
function primaryLanguage(header: string | undefined): string | null {
  const first = header?.split(',')[0]?.split(';')[0]?.trim();
  return first ? first : null;
}
