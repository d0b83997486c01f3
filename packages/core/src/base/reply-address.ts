/**
 * Per-delivery reply addresses (issue 40): `reply+<delivery id>@<reply domain>`, set as the Reply-To of
 * sent mail when a project turns them on. The delivery id is as unguessable as the Message-ID that
 * carries it (`<deliveryId@domain>`), and is checked the same way: a reply names a delivery only when a
 * delivery of the route's project has exactly that id.
 */

/** The local part's prefix of a reply address. */
export const REPLY_PREFIX = 'reply+';

/** The reply address of one delivery. */
export function replyAddressOf(deliveryId: string, domain: string): string {
  return `${REPLY_PREFIX}${deliveryId}@${domain}`;
}

/**
 * The delivery id a reply address names, when it has the shape of one at `domain` (the id is checked
 * against the store by the caller); undefined otherwise. Local parts compare without case.
 */
export function deliveryIdOfReply(address: string, domain: string): string | undefined {
  const lower = address.toLowerCase();
  const at = lower.lastIndexOf('@');
  if (at < 0 || lower.slice(at + 1) !== domain.toLowerCase()) return undefined;
  const local = lower.slice(0, at);
  if (!local.startsWith(REPLY_PREFIX)) return undefined;
  const id = local.slice(REPLY_PREFIX.length);
  return /^[a-z0-9_]{1,64}$/.test(id) ? id : undefined;
}
