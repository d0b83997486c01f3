/**
 * What the inbound SMTP listener asks the engine before it hands a message on (may this recipient be
 * taken?) and tells it when it refuses one unread: I/O stays in the listener, the decision here.
 */
import { isAtDomain } from './find-delivery.js';
import type { InboundContext } from './inbound-context.js';
import type { InboundEvents } from './inbound-events.js';
import type { InboundEnvelope } from './inbound-types.js';

/** Longest address taken at RCPT: 64 for the local part, the @, 255 for the domain (RFC 5321). */
const MAX_ADDRESS_LENGTH = 320;

/** `MailroomInbound.acceptsRecipient`: any local part at the bounce domain, of a sane length. */
export function acceptsRecipient(ctx: InboundContext, address: string): boolean {
  return isAtDomain(ctx.bounces?.domain, address) && address.length <= MAX_ADDRESS_LENGTH;
}

/** `MailroomInbound.recipientVerdict`: `outside`, `forged` (by the MAC alone) or `accept`. */
export async function recipientVerdict(
  ctx: InboundContext,
  address: string,
): Promise<'accept' | 'outside' | 'forged'> {
  if (!acceptsRecipient(ctx, address) || !ctx.bounces) return 'outside';
  if (!address.toLowerCase().startsWith('b+')) return 'accept';
  // The MAC alone decides (verp-token.ts): a forged token costs one HMAC, never a store read.
  return (await ctx.bounces.deliveryOf(address)) === undefined ? 'forged' : 'accept';
}

/** What the listener refused unread (see `MailroomInbound.refused`). */
export type ListenerRefusal = 'too-large' | 'rate-limited' | 'header-too-large' | 'forged-token';

/** `MailroomInbound.refused`: logs the refusals the listener does not log itself, and counts every one. */
export function noteRefusal(
  ctx: InboundContext,
  code: ListenerRefusal,
  envelope: Partial<InboundEnvelope>,
): void {
  if (code === 'too-large' || code === 'rate-limited') {
    ctx.logger.warn(
      { envelopeTo: envelope.envelopeTo?.slice(0, 5), remoteAddress: envelope.remoteAddress, code },
      code === 'too-large'
        ? 'inbound message over the size cap refused'
        : 'inbound message deferred: rate limit',
    );
  }
  ctx.events.view<InboundEvents>().emit('inbound:message', {
    via: 'smtp',
    report: 'unrecognised',
    outcome: code === 'rate-limited' ? 'deferred' : 'ignored',
    code,
  });
}
