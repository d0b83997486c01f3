import { createCipheriv, createDecipheriv, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Preference-centre tokens (`{{ preferences_url }}`, issue 38). A token stands for one contact of one
 * project, not for one message: it is the contact's (project id, address) sealed with AES-256-GCM under a
 * key derived from the unsubscribe secret. Only the server can make or read one, a changed byte fails the
 * GCM tag, and a forwarded link does not show the address. The IV is derived from the plaintext (a
 * synthetic IV, as in SIV): the same contact always gets the same link, and no two plaintexts share an IV.
 *
 * Shape: `p1.<base64url(iv[12] | ciphertext | tag[16])>`, safe in a URL path without escaping.
 */

/** Who a preference token stands for. */
export interface PreferenceTokenFields {
  projectId: string;
  /** The normalized address. */
  address: string;
}

const PREFIX = 'p1.';
const TOKEN = /^p1\.([A-Za-z0-9_-]{40,1400})$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The three keys a secret gives: encryption, synthetic IV, CSRF. Domain-separated, never reused. */
function keysOf(secret: string): { enc: Buffer; iv: Buffer; csrf: Buffer } {
  const derive = (label: string) =>
    createHmac('sha256', secret).update(`mailroom-preferences:v1:${label}`).digest();
  return { enc: derive('enc'), iv: derive('iv'), csrf: derive('csrf') };
}

const cache = new Map<string, ReturnType<typeof keysOf>>();
function keys(secret: string): ReturnType<typeof keysOf> {
  let found = cache.get(secret);
  if (!found) {
    if (cache.size > 16) cache.clear();
    found = keysOf(secret);
    cache.set(secret, found);
  }
  return found;
}

/** The contact's token. */
export function sealPreferenceToken(secret: string, fields: PreferenceTokenFields): string {
  const k = keys(secret);
  // NUL cannot occur in a project id or an address: the split on reading is unambiguous.
  const plain = Buffer.from(`${fields.projectId}\u0000${fields.address}`, 'utf8');
  const iv = createHmac('sha256', k.iv).update(plain).digest().subarray(0, IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', k.enc, iv);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

/** Who a token stands for, or undefined for anything this server did not make (forged, altered, foreign). */
export function openPreferenceToken(secret: string, token: string): PreferenceTokenFields | undefined {
  const m = TOKEN.exec(token);
  if (!m) return undefined;
  const bytes = Buffer.from(m[1] as string, 'base64url');
  if (bytes.toString('base64url') !== m[1] || bytes.length <= IV_BYTES + TAG_BYTES) return undefined;
  const k = keys(secret);
  const iv = bytes.subarray(0, IV_BYTES);
  const tag = bytes.subarray(bytes.length - TAG_BYTES);
  let plain: Buffer;
  try {
    const decipher = createDecipheriv('aes-256-gcm', k.enc, iv);
    decipher.setAuthTag(tag);
    plain = Buffer.concat([
      decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]);
  } catch {
    return undefined;
  }
  const expected = createHmac('sha256', k.iv).update(plain).digest().subarray(0, IV_BYTES);
  if (!timingSafeEqual(expected, iv)) return undefined;
  const text = plain.toString('utf8');
  const nul = text.indexOf('\u0000');
  if (nul <= 0 || nul === text.length - 1) return undefined;
  return { projectId: text.slice(0, nul), address: text.slice(nul + 1) };
}

/** How long a page's CSRF token is taken: a page left open for a day still saves. */
export const PREFERENCE_CSRF_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * The CSRF token of a page shown at `now` for `token`: `<issued, base 36 seconds>.<MAC>`. Bound to the
 * preference token, so a form of one contact's page cannot save another's; stateless (no session, no
 * cookie), so any process on the store takes it.
 */
export function signPreferenceCsrf(secret: string, token: string, now: Date): string {
  const issued = Math.floor(now.getTime() / 1000).toString(36);
  return `${issued}.${csrfMac(secret, token, issued)}`;
}

/** Whether `csrf` was made for `token` by this server within {@link PREFERENCE_CSRF_TTL_MS} of `now`. */
export function verifyPreferenceCsrf(secret: string, token: string, csrf: string, now: Date): boolean {
  const m = /^([0-9a-z]{1,10})\.([A-Za-z0-9_-]{43})$/.exec(csrf);
  if (!m) return false;
  const issuedMs = Number.parseInt(m[1] as string, 36) * 1000;
  if (!(issuedMs <= now.getTime() + 60_000 && now.getTime() - issuedMs <= PREFERENCE_CSRF_TTL_MS))
    return false;
  const expected = Buffer.from(csrfMac(secret, token, m[1] as string), 'base64url');
  const given = Buffer.from(m[2] as string, 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function csrfMac(secret: string, token: string, issued: string): string {
  return createHmac('sha256', keys(secret).csrf).update(`${token}\u0000${issued}`).digest('base64url');
}
