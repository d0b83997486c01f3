import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * VERP return-path tokens. Every message's envelope sender is `b+<token>@<bounce domain>`, so a bounce
 * (mailed to the envelope sender) names the delivery it is about. The token is the delivery id and a
 * 64-bit HMAC-SHA256 of it under a per-installation secret: only the engine can make one, an edited id
 * fails the MAC, and the MAC is checked before anything is looked up.
 *
 * Shape: `<delivery id>-<16 lower-case hex>`. Lower case only, because some MTAs fold the case of the
 * address they bounce to; at most 62 characters, so `b+` and the token fit a 64-character local part.
 */

/** The local-part prefix of every return path. */
export const VERP_PREFIX = 'b+';

// Version tag: a token of another purpose (unsubscribe links) never has this MAC.
const DOMAIN = 'mailroom-verp:v1';
const TOKEN = /^([a-z0-9_]{1,45})-([0-9a-f]{16})$/;

/** The token of one delivery. */
export function signVerpToken(secret: string, deliveryId: string): string {
  return `${deliveryId}-${mac(secret, deliveryId)}`;
}

/**
 * The delivery id a token names, when its MAC is right under `secret` (compared in constant time);
 * undefined for anything else (a forged, edited or truncated token). Case-insensitive.
 */
export function verifyVerpToken(secret: string, token: string): string | undefined {
  const m = TOKEN.exec(token.toLowerCase());
  if (!m) return undefined;
  const deliveryId = m[1] as string;
  const given = Buffer.from(m[2] as string, 'hex');
  const expected = Buffer.from(mac(secret, deliveryId), 'hex');
  return timingSafeEqual(given, expected) ? deliveryId : undefined;
}

/** The return path of a delivery: `b+<token>@<domain>`. */
export function verpAddress(secret: string, deliveryId: string, domain: string): string {
  return `${VERP_PREFIX}${signVerpToken(secret, deliveryId)}@${domain}`;
}

/**
 * The token of a return-path address at `domain` (`b+<token>@domain`, domain compared case-insensitively),
 * or undefined when the address is not one. The MAC is not checked here.
 */
export function verpTokenOf(address: string, domain: string): string | undefined {
  const at = address.lastIndexOf('@');
  if (at < 0 || address.slice(at + 1).toLowerCase() !== domain.toLowerCase()) return undefined;
  const local = address.slice(0, at);
  if (local.slice(0, VERP_PREFIX.length).toLowerCase() !== VERP_PREFIX) return undefined;
  return local.slice(VERP_PREFIX.length);
}

function mac(secret: string, deliveryId: string): string {
  return createHmac('sha256', secret)
    .update(`${DOMAIN}\u0000${deliveryId}`, 'utf8')
    .digest()
    .subarray(0, 8)
    .toString('hex');
}
