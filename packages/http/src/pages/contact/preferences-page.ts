import type { MailroomError, PreferencePage } from '@mailroom/core';
import type { NeutralResponse } from '../../neutral/types.js';
import { html, type SafeHtml } from '../html.js';
import {
  type ContactBrand,
  contactErrorPage,
  contactPage,
  contactResponse,
  maskAddress,
} from './contact-layout.js';
import { type ContactPageStrings, fill, stringsFor } from './strings/index.js';

/** What the page says above the form after a POST. */
export type PreferenceNotice = 'saved' | 'unchanged' | 'unsubscribed' | 'resubscribed' | 'expired';

/**
 * The preference centre's page (`GET/POST /preferences/:token`): the project's public topics as
 * checkboxes in a fieldset, a save button, and "unsubscribe from everything" in a form of its own. Plain
 * HTML forms, no script: it works without JavaScript and with the keyboard alone; every input has its
 * label, the descriptions are tied to their inputs, the notice is a live status. Every value the project or
 * contact wrote (topic names and descriptions, the project's name) is escaped by `html`.
 */
export function preferencesPage(
  requestId: string,
  token: string,
  page: PreferencePage,
  notice?: PreferenceNotice,
  status = 200,
): NeutralResponse {
  const t = stringsFor(page.locale);
  const vars = { project: page.projectName, address: maskAddress(page.address) };
  // Relative to /preferences/: posts back to this very URL wherever the adapter is mounted.
  const action = encodeURIComponent(token);
  const csrf = html`<input type="hidden" name="_csrf" value="${page.csrf}">`;
  const topics = page.topics.map(
    (topic, i) =>
      html`<div class="topic"><input type="checkbox" id="topic-${i}" name="topic" value="${topic.key}"${topic.subscribed ? html` checked` : ''}${topic.description ? html` aria-describedby="topic-${i}-desc"` : ''}><label for="topic-${i}"><span class="name">${topic.name}</span>${topic.description ? html`<span class="desc" id="topic-${i}-desc">${topic.description}</span>` : ''}</label></div>`,
  );
  const choose =
    page.topics.length === 0
      ? html`<p>${t.noTopics}</p>`
      : html`<form method="post" action="${action}">${csrf}<fieldset><legend>${t.topicsLegend}</legend>${topics}</fieldset><button type="submit" name="action" value="save">${t.save}</button></form>`;
  const everything = page.unsubscribed
    ? html`<form method="post" action="${action}">${csrf}<fieldset><legend>${t.unsubscribeAllLegend}</legend><p>${fill(t.unsubscribedAll, vars)}</p><button type="submit" name="action" value="resubscribe" class="secondary">${t.resubscribe}</button></fieldset></form>`
    : html`<form method="post" action="${action}">${csrf}<fieldset><legend>${t.unsubscribeAllLegend}</legend><p>${fill(t.unsubscribeAllHint, vars)}</p><button type="submit" name="action" value="unsubscribe-all" class="secondary">${t.unsubscribeAll}</button></fieldset></form>`;
  const body = html`<h1>${t.preferencesTitle}</h1><p>${fill(t.preferencesIntro, vars)}</p>${noticeOf(t, notice, vars)}${choose}${everything}`;
  return contactResponse(status, requestId, contactPage(t, brandOf(page), t.preferencesTitle, body));
}

/** A refused link: 404 (forged, altered, foreign) or 410 (erased), in English (the contact is unknown). */
export function refusedPreferencesPage(requestId: string, error: MailroomError): NeutralResponse {
  const t = stringsFor(null);
  const brand: ContactBrand = { projectName: 'Mailroom', color: null, logo: null };
  const [title, text] =
    error.status === 410 ? [t.erasedTitle, t.erased] : [t.invalidLinkTitle, t.invalidLink];
  return contactResponse(
    error.status,
    requestId,
    contactErrorPage(t, brand, error.status, requestId, title, text),
  );
}

function brandOf(page: PreferencePage): ContactBrand {
  return { projectName: page.projectName, color: page.color, logo: page.logo };
}

function noticeOf(
  t: ContactPageStrings,
  notice: PreferenceNotice | undefined,
  vars: Record<string, string>,
): SafeHtml | '' {
  if (!notice) return '';
  const text = {
    saved: t.saved,
    unchanged: t.nothingChanged,
    unsubscribed: fill(t.unsubscribedAll, vars),
    resubscribed: t.resubscribed,
    expired: t.formExpired,
  }[notice];
  // A live region: a screen reader announces the outcome of the save without moving the focus.
  return html`<p class="status${notice === 'expired' ? ' warn' : ''}" role="status">${text}</p>`;
}
