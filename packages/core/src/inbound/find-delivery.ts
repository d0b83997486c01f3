/**
 * Finding the delivery a report is about, only through what the engine can verify: a VERP token's MAC,
 * or an unguessable Message-ID (docs/architecture.md, invariant 11: nothing is trusted by its look).
 */
import type { DeliveryRecord } from '../store/records.js';
import type { InboundContext } from './inbound-context.js';
import type { InboundIgnoreCode } from './inbound-types.js';

/** The delivery a report is about, or why none is. */
export type Found = { delivery: DeliveryRecord } | { code: InboundIgnoreCode; reason: string };

/** Whether `address` is at the bounce `domain` (case-insensitive); never, without one. */
export function isAtDomain(domain: string | undefined, address: string): boolean {
  return domain !== undefined && address.toLowerCase().endsWith(`@${domain}`);
}

/**
 * The delivery named by a valid token among `addresses`; `forged` when none is valid and one is a
 * `b+` return path at the bounce domain (a token forged or edited), else undefined.
 */
export async function deliveryByToken(
  ctx: InboundContext,
  addresses: readonly (string | null | undefined)[],
): Promise<DeliveryRecord | 'forged' | undefined> {
  if (!ctx.bounces) return undefined;
  const domain = ctx.bounces.domain;
  let forged = false;
  for (const address of addresses) {
    if (!address) continue;
    const id = await ctx.bounces.deliveryOf(address);
    if (id === undefined) {
      forged ||= isAtDomain(domain, address) && address.toLowerCase().startsWith('b+');
      continue;
    }
    const delivery = await ctx.store.getDelivery(id);
    if (delivery) return delivery;
  }
  return forged ? 'forged' : undefined;
}

/** The delivery whose Message-ID is exactly `messageId` (the id is its local part). */
export async function deliveryByMessageId(
  ctx: InboundContext,
  messageId: string | null,
): Promise<DeliveryRecord | undefined> {
  if (!messageId) return undefined;
  const bracketed = messageId.startsWith('<') ? messageId : `<${messageId}>`;
  const m = /^<([a-z0-9_]{1,64})@[^<>@\s]+>$/.exec(bracketed);
  if (!m) return undefined;
  const delivery = await ctx.store.getDelivery(m[1] as string);
  return delivery?.messageId === bracketed ? delivery : undefined;
}

/**
 * Whether a report whose token names `delivery` may apply to it, given the Message-ID of its returned
 * copy: the token is authoritative (a forwarder or a list changes the Message-ID, an MTA may return
 * no copy), unless that Message-ID names another delivery of this engine: then the two verifiable
 * names disagree and neither is trusted.
 */
export async function tokenAgrees(
  ctx: InboundContext,
  delivery: DeliveryRecord,
  messageId: string | null,
): Promise<Found> {
  if (!messageId || messageId === delivery.messageId) return { delivery };
  const named = await deliveryByMessageId(ctx, messageId);
  if (!named) return { delivery };
  return named.projectId === delivery.projectId
    ? { code: 'other-delivery', reason: 'the report names another message than its return path' }
    : {
        code: 'other-project',
        reason: "the report names another project's message than its return path",
      };
}
