import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Confirmation tokens of double opt-in (issue 38). A token names one signup and its expiry, and carries an
 * HMAC-SHA256, under the installation's signup secret, of the project, the signup, the address and the
 * expiry: only the server can make one, one cannot be moved to another signup, project or expiry, and the
 * address is not in it (a forwarded link does not show it).
 *
 * Shape: `<signup id>.<expiry, ms in base 36>.<base64url MAC>` (43 characters of MAC), URL-safe as made.
 */

/** What a token's MAC covers. */
export interface SignupTokenFields {
  projectId: string;
  signupId: string;
  /** The normalized address. */
  address: string;
  /** Milliseconds since the epoch after which the link is expired. */
  expiresAt: number;
}

/** A token split into its parts; the MAC is not checked yet. */
export interface ParsedSignupToken {
  signupId: string;
  expiresAt: number;
  mac: Buffer;
}

// Version tag and NUL separators: no field can contain NUL, so two field lists never give one message.
const DOMAIN = 'mailroom-signup-confirm:v1';
const TOKEN = /^([A-Za-z0-9_]{1,64})\.([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/;

/** The token of one signup's confirmation link. */
export function signSignupToken(secret: string, fields: SignupTokenFields): string {
  return `${fields.signupId}.${fields.expiresAt.toString(36)}.${mac(secret, fields).toString('base64url')}`;
}

/** Splits a token, or undefined when it does not have the shape of one (nothing to look up then). */
export function parseSignupToken(token: string): ParsedSignupToken | undefined {
  const m = TOKEN.exec(token);
  if (!m) return undefined;
  const macBytes = Buffer.from(m[3] as string, 'base64url');
  // 43 base64url characters carry 258 bits; the last two must be zero for a canonical encoding.
  if (macBytes.length !== 32 || macBytes.toString('base64url') !== m[3]) return undefined;
  const expiresAt = Number.parseInt(m[2] as string, 36);
  if (!Number.isSafeInteger(expiresAt)) return undefined;
  return { signupId: m[1] as string, expiresAt, mac: macBytes };
}

/** Whether `parsed` is the token of `fields` under `secret`; compares in constant time. */
export function verifySignupToken(
  secret: string,
  parsed: ParsedSignupToken,
  fields: SignupTokenFields,
): boolean {
  if (parsed.signupId !== fields.signupId || parsed.expiresAt !== fields.expiresAt) return false;
  return timingSafeEqual(parsed.mac, mac(secret, fields));
}

function mac(secret: string, f: SignupTokenFields): Buffer {
  return createHmac('sha256', secret)
    .update([DOMAIN, f.projectId, f.signupId, f.address, String(f.expiresAt)].join('\u0000'), 'utf8')
    .digest();
}
