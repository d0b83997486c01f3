/**
 * A received message that answers one Mailroom sent: its In-Reply-To, then its References from the
 * newest, matched against the Message-IDs of deliveries (`<deliveryId@domain>`, unguessable, checked
 * exactly as the bounce side checks them: `inbound/find-delivery.ts`), of the route's project only.
 */
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
): Promise<{ delivery: DeliveryRecord; mailing: MailingRecord } | undefined> {
  const candidates = [ids.in_reply_to, ...[...ids.references].reverse()].filter(
    (id, i, all): id is string => id !== null && all.indexOf(id) === i,
  );
  for (const id of candidates.slice(0, MAX_LOOKUPS)) {
    const delivery = await deliveryByMessageId(ctx, id);
    if (!delivery || delivery.projectId !== projectId) continue;
    const mailing = await ctx.store.getMailingById(delivery.mailingId);
    if (mailing) return { delivery, mailing };
  }
  return undefined;
}

/** The link as the message shows it. */
export function replyLink(delivery: DeliveryRecord, mailing: MailingRecord): InboundReplyLink {
  return {
    delivery_id: delivery.id,
    message_id: delivery.messageId,
    address: delivery.address,
    mailing: { ref: mailing.ref, kind: mailing.kind },
  };
}
