import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * One-click unsubscribe tokens (RFC 8058 links). A token names one delivery and carries an HMAC-SHA256,
 * under a server secret, of the project, the broadcast and the address that delivery went to: only the
 * server can make one, and a token for one address cannot be turned into a token for another. The
 * address itself is not in the token, so a forwarded link does not show it.
 *
 * Shape: `<delivery id>.<base64url MAC>` (43 characters of MAC), safe in a URL path without escaping.
 */

/** What a token's MAC covers. */
export interface UnsubscribeTokenFields {
  projectId: string;
  /** The broadcast's id. */
  mailingId: string;
  /** The normalized address. */
  address: string;
  deliveryId: string;
}

/** A token split into its parts; the MAC is not checked yet. */
export interface ParsedUnsubscribeToken {
  deliveryId: string;
  mac: Buffer;
}

/** Secrets shorter than this are refused: the MAC is only as strong as its key. */
export const MIN_UNSUBSCRIBE_SECRET_LENGTH = 16;

// Version tag and NUL separators: no field can contain NUL, so two field lists never give one message.
const DOMAIN = 'mailroom-unsubscribe:v1';
const TOKEN = /^([A-Za-z0-9_-]{1,128})\.([A-Za-z0-9_-]{43})$/;

/** The token of one delivery. */
export function signUnsubscribeToken(secret: string, fields: UnsubscribeTokenFields): string {
  return `${fields.deliveryId}.${mac(secret, fields).toString('base64url')}`;
}

/** Splits a token, or undefined when it does not have the shape of one (nothing to look up then). */
export function parseUnsubscribeToken(token: string): ParsedUnsubscribeToken | undefined {
  const m = TOKEN.exec(token);
  if (!m) return undefined;
  const mac = Buffer.from(m[2] as string, 'base64url');
  // 43 base64url characters carry 258 bits; the last two must be zero for a canonical encoding.
  if (mac.length !== 32 || mac.toString('base64url') !== m[2]) return undefined;
  return { deliveryId: m[1] as string, mac };
}

/** Whether `parsed` is the token of `fields` under `secret`; compares in constant time. */
export function verifyUnsubscribeToken(
  secret: string,
  parsed: ParsedUnsubscribeToken,
  fields: UnsubscribeTokenFields,
): boolean {
  if (parsed.deliveryId !== fields.deliveryId) return false;
  return timingSafeEqual(parsed.mac, mac(secret, fields));
}

function mac(secret: string, f: UnsubscribeTokenFields): Buffer {
  return createHmac('sha256', secret)
    .update([DOMAIN, f.projectId, f.mailingId, f.address, f.deliveryId].join('\u0000'), 'utf8')
    .digest();
}
