import type { AuthContext, Mailroom } from '@mailroom/core';
import type { SafeHtml } from '../pages/html.js';
import type { PageContext } from './layout.js';
import { inboundMessagePage, inboundPage, repliesSection } from './pages/inbound-page.js';

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
