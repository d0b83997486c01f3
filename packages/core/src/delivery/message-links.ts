import type { ClaimedDelivery, MailingRecord } from '../store/records.js';
import type { UnsubscribeContext } from '../unsubscribe/unsubscribe-context.js';

/** The links a message's templates may print, by their Liquid names. */
export interface MessageLinks {
  /**
   * The delivery's one-click unsubscribe link (a broadcast's): the one its List-Unsubscribe header names.
   * A topic broadcast's link leaves that topic only.
   */
  unsubscribe_url?: string;
  /** The contact's preference centre (any message, when the content names it). */
  preferences_url?: string;
}

/** What {@link messageLinks} gives: the List-Unsubscribe headers and the variables to render with. */
export interface DeliveryLinks {
  headers: Record<string, string>;
  /** The links the templates may print; empty when none. */
  variables: MessageLinks;
}

const NO_LINKS: DeliveryLinks = { headers: {}, variables: {} };

// Whether a mailing's content names `preferences_url`, by mailing: the link costs a seal per delivery.
const namesPreferences = new WeakMap<MailingRecord, boolean>();

function contentNames(mailing: MailingRecord, name: string): boolean {
  const { subject, preheader, html, text } = mailing.content;
  return [subject, preheader, html, text].some((part) => part?.includes(name) === true);
}

/**
 * The engine's links of one delivery (issue 38): `unsubscribe_url` (broadcasts, with the RFC 8058 headers)
 * and `preferences_url` (when the content names it), each only when the engine has `unsubscribe` and
 * the request gave no variable of that name (an app's own value wins).
 */
export async function messageLinks(
  ctx: UnsubscribeContext,
  mailing: MailingRecord,
  delivery: ClaimedDelivery,
): Promise<DeliveryLinks> {
  if (!ctx.unsubscribe) return NO_LINKS;
  const given = (name: string) =>
    Object.hasOwn(delivery.variables, name) || Object.hasOwn(mailing.content.variables, name);
  const variables: MessageLinks = {};
  let headers: Record<string, string> = {};
  if (mailing.kind === 'broadcast') {
    const url = await ctx.unsubscribe.link(mailing, delivery);
    headers = { 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
    if (!given('unsubscribe_url')) variables.unsubscribe_url = url;
  }
  if (ctx.preferences) {
    let names = namesPreferences.get(mailing);
    if (names === undefined) {
      names = contentNames(mailing, 'preferences_url');
      namesPreferences.set(mailing, names);
    }
    if (names && !given('preferences_url')) {
      variables.preferences_url = await ctx.preferences.link(mailing.projectId, delivery.address);
    }
  }
  return { headers, variables };
}

/** The delivery as the renderer sees it: its variables with the links (only when there are any). */
export function withLinks(delivery: ClaimedDelivery, links: DeliveryLinks): ClaimedDelivery {
  const { variables } = links;
  if (variables.unsubscribe_url === undefined && variables.preferences_url === undefined) return delivery;
  return { ...delivery, variables: { ...delivery.variables, ...variables } };
}
