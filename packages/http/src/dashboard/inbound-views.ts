import type { AuthContext, Mailroom, ReceivingSettingsInput } from '@mailroom/core';
import { isMailroomError } from '@mailroom/core';
import type { SafeHtml } from '../pages/html.js';
import type { PageContext } from './layout.js';
import { inboundMessagePage, inboundPage, repliesSection } from './pages/inbound-page.js';
import { inboundSettingsPage } from './pages/inbound-settings-page.js';

/** Received messages per page of the inbound listing. */
const MESSAGES_PER_PAGE = 50;
/** Replies shown on a mailing's page (the oldest first). */
const REPLIES_SHOWN = 100;

/**
 * The inbound pages (issue 40) over `mailroom.receiving`: the routes (and the receiving domains they
 * name) with a page of received messages (`?before=`), and one received message. Scoped to the project.
 */
export async function inboundView(
  mailroom: Mailroom,
  auth: AuthContext,
  ctx: PageContext,
  q: URLSearchParams,
): Promise<SafeHtml> {
  const before = q.get('before') || undefined;
  const [routes, page] = await Promise.all([
    mailroom.receiving.listRoutes(auth),
    mailroom.receiving.listMessages(auth, { limit: MESSAGES_PER_PAGE, ...(before ? { before } : {}) }),
  ]);
  return inboundPage(ctx, { routes, messages: page.items, before, next: page.next });
}

/** One received message's page. */
export async function inboundMessageView(
  mailroom: Mailroom,
  auth: AuthContext,
  ctx: PageContext,
  id: string,
): Promise<SafeHtml> {
  return inboundMessagePage(ctx, await mailroom.receiving.getMessage(auth, id));
}

/** The replies to a mailing (its `email.replied` events) as its page's section; empty without any. */
export async function repliesOf(
  mailroom: Mailroom,
  auth: AuthContext,
  ctx: PageContext,
  ref: string,
): Promise<SafeHtml> {
  const events = await mailroom.listEvents(auth, {
    mailingRef: ref,
    types: ['email.replied'],
    limit: REPLIES_SHOWN,
  });
  return repliesSection(ctx, events.items);
}

/** The receiving settings page; `notice` after a save. */
export async function inboundSettingsView(
  mailroom: Mailroom,
  auth: AuthContext,
  ctx: PageContext,
  notice?: string,
): Promise<SafeHtml> {
  const settings = await mailroom.receiving.getSettings(auth);
  return inboundSettingsPage(ctx, { settings, ...(notice ? { notice } : {}) });
}

/**
 * Saves the settings form (`receiving.updateSettings`: the API's checks, in one place). Undefined when saved;
 * a refused form's page (its fields' messages above the form, the stored settings in it) otherwise.
 */
export async function saveInboundSettings(
  mailroom: Mailroom,
  auth: AuthContext,
  ctx: PageContext,
  form: URLSearchParams,
): Promise<SafeHtml | undefined> {
  try {
    await mailroom.receiving.updateSettings(auth, settingsInput(form));
    return undefined;
  } catch (error) {
    if (!isMailroomError(error, 'VALIDATION_FAILED')) throw error;
    const fields = (error.issues ?? []).map((i) => `${i.path.join('.') || 'form'}: ${i.message}`);
    const settings = await mailroom.receiving.getSettings(auth);
    return inboundSettingsPage(ctx, {
      settings,
      error: `Not saved. ${fields.length > 0 ? fields.join('; ') : error.message}`,
    });
  }
}

/** The form's fields as the API's patch: every field sent, an empty one back to the default (null). */
function settingsInput(form: URLSearchParams): ReceivingSettingsInput {
  const number = (name: string): number | null => {
    const value = form.get(name)?.trim() ?? '';
    // Not a number: NaN, which the API's schema refuses with the field's name.
    return value === '' ? null : Number(value);
  };
  const domain = form.get('reply_domain')?.trim() ?? '';
  return {
    retention_days: number('retention_days'),
    max_message_bytes: number('max_message_bytes'),
    reply_domain: domain === '' ? null : domain,
  };
}
