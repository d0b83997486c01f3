/**
 * A received message that answers one Mailroom sent: first a per-delivery reply address among the
 * recipients the route took (`reply+<delivery id>@...`, base/reply-address.ts), then its In-Reply-To, then
 * its References from the newest, matched against the Message-IDs of deliveries (`<deliveryId@domain>`,
 * unguessable, checked exactly as the bounce side checks them: `inbound/find-delivery.ts`), of the route's
 * project only.
 */
import { domainOf } from '../base/address-parts.js';
import { deliveryIdOfReply } from '../base/reply-address.js';
import type { BaseContext } from '../context/base-context.js';
import { deliveryByMessageId } from '../inbound/find-delivery.js';
import type { DeliveryRecord, MailingRecord } from '../store/records.js';
import type { InboundReplyLink } from './receiving-types.js';

/** At most this many referenced Message-IDs are looked up (a long thread names every message). */
const MAX_LOOKUPS = 10;

/** The delivery a message answers, with its mailing; undefined when it answers none of the project's. */
export async function findRepliedDelivery(
  ctx: BaseContext,
  projectId: string,
  ids: { in_reply_to: string | null; references: readonly string[] },
  recipients: readonly string[] = [],
): Promise<RepliedDelivery | undefined> {
  for (const to of recipients.slice(0, MAX_LOOKUPS)) {
    const id = deliveryIdOfReply(to, domainOf(to));
    if (id === undefined) continue;
    const delivery = await ctx.store.getDelivery(id);
    if (!delivery || delivery.projectId !== projectId) continue;
    const mailing = await ctx.store.getMailingById(delivery.mailingId);
    if (mailing) return { delivery, mailing, matchedBy: 'reply_address' };
  }
  const candidates = [ids.in_reply_to, ...[...ids.references].reverse()].filter(
    (id, i, all): id is string => id !== null && all.indexOf(id) === i,
  );
  for (const id of candidates.slice(0, MAX_LOOKUPS)) {
    const delivery = await deliveryByMessageId(ctx, id);
    if (!delivery || delivery.projectId !== projectId) continue;
    const mailing = await ctx.store.getMailingById(delivery.mailingId);
    if (mailing) return { delivery, mailing, matchedBy: 'headers' };
  }
  return undefined;
}

/** A delivery a message answers, with its mailing and how it was matched. */
export interface RepliedDelivery {
  delivery: DeliveryRecord;
  mailing: MailingRecord;
  matchedBy: InboundReplyLink['matched_by'];
}

/** The link as the message shows it. */
export function replyLink({ delivery, mailing, matchedBy }: RepliedDelivery): InboundReplyLink {
  return {
    delivery_id: delivery.id,
    message_id: delivery.messageId,
    address: delivery.address,
    mailing: { ref: mailing.ref, kind: mailing.kind },
    matched_by: matchedBy,
  };
}
