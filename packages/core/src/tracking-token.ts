import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Open and click tracking tokens. A token names the project, the mailing, the delivery, the time its
 * message was rendered (seconds since the epoch, base 36) and, for a click, the link's index in the
 * mailing's link map; a link whose URL differs per recipient (Liquid in its `href`) also carries that
 * recipient's URL. Every field is covered by an HMAC-SHA256 under the installation's tracking secret: only
 * the engine can make a token, no field can be changed, and a forged token is refused before anything is
 * looked up. The address is never in a token.
 *
 * Shapes (every field URL-safe, so a token needs no escaping in a path), with `<head>` =
 * `<projectId>.<mailingId>.<deliveryId>.<sentAt36>`:
 * - open: `<head>.<mac>`, the MAC (128 bits) over the head;
 * - click on a fixed link: `<head>.<index36>.<tag>`, the tag (64 bits) one slice of the HMAC of the head
 *   and the index's block of four: one HMAC signs four links of a message, so a newsletter's links cost a
 *   few HMACs per recipient instead of one each, and each tag still covers its index;
 * - click on a link with the recipient's URL: `<head>.<index36>.<base64url URL>.<mac>`, the MAC (128 bits)
 *   over all of it.
 */

/** What a token stands for. */
export interface TrackingTokenFields {
  projectId: string;
  mailingId: string;
  deliveryId: string;
  /** When the message was rendered, in whole seconds since the epoch. */
  sentAt: number;
}

/** A click's fields: the link, and the URL when it is the recipient's own. */
export interface ClickTokenFields extends TrackingTokenFields {
  /** The link's index in the mailing's link map. */
  index: number;
  /** The recipient's rendered URL, for a link with Liquid in its `href`; absent for a fixed one. */
  url?: string;
}

/** A token split into its fields; its MAC is not checked yet. */
export interface ParsedTrackingToken {
  kind: 'open' | 'click';
  projectId: string;
  mailingId: string;
  deliveryId: string;
  sentAt: number;
  /** Clicks only. */
  index?: number;
  /** Clicks of a link with a per-recipient URL. */
  url?: string;
  /** The head of the token (the fields before the index), as signed. */
  head: string;
  mac: Buffer;
}

/** Tracking secrets shorter than this are refused. */
export const MIN_TRACKING_SECRET_LENGTH = 16;
/** A URL carried in a token: longer ones are not rewritten (the link stays untracked). */
export const MAX_TOKEN_URL_LENGTH = 2048;

const MAC_BYTES = 16;
const TAG_BYTES = 8;
const LINKS_PER_BLOCK = 32 / TAG_BYTES;
const ID = /^[A-Za-z0-9_-]{1,128}$/;
const NUM = /^[0-9a-z]{1,11}$/;
const B64 = /^[A-Za-z0-9_-]+$/;

/** The head of a delivery's tokens. */
function headOf(f: TrackingTokenFields): string {
  return `${f.projectId}.${f.mailingId}.${f.deliveryId}.${f.sentAt.toString(36)}`;
}

/** The token of one open. */
export function signOpenToken(secret: string, f: TrackingTokenFields): string {
  const head = headOf(f);
  return `${head}.${b64(hmac(secret, `open\u0000${head}`).subarray(0, MAC_BYTES))}`;
}

/** Signs the click tokens of one delivery, one HMAC per four fixed links (see the file's comment). */
export type ClickSigner = (index: number, url?: string) => string;

/** The click signer of one delivery's message. */
export function clickSigner(secret: string, f: TrackingTokenFields): ClickSigner {
  const head = headOf(f);
  const blocks: Buffer[] = [];
  return (index, url) => {
    const at = `${head}.${index.toString(36)}`;
    if (url !== undefined) {
      const signed = `${at}.${b64(Buffer.from(url, 'utf8'))}`;
      return `${signed}.${b64(hmac(secret, `click-url\u0000${signed}`).subarray(0, MAC_BYTES))}`;
    }
    const block = Math.floor(index / LINKS_PER_BLOCK);
    blocks[block] ??= blockMac(secret, head, block);
    const slot = (index % LINKS_PER_BLOCK) * TAG_BYTES;
    return `${at}.${b64((blocks[block] as Buffer).subarray(slot, slot + TAG_BYTES))}`;
  };
}

/** The token of one click (for a single link; a message's links share a {@link clickSigner}). */
export function signClickToken(secret: string, f: ClickTokenFields): string {
  return clickSigner(secret, f)(f.index, f.url);
}

/** Splits a token, or undefined when it has not the shape of one of `kind` (nothing to look up then). */
export function parseTrackingToken(kind: 'open' | 'click', token: string): ParsedTrackingToken | undefined {
  const parts = token.split('.');
  const expected = kind === 'open' ? [5] : [6, 7];
  if (!expected.includes(parts.length)) return undefined;
  const [projectId, mailingId, deliveryId, sentAt] = parts as [string, string, string, string];
  if (!ID.test(projectId) || !ID.test(mailingId) || !ID.test(deliveryId) || !NUM.test(sentAt)) {
    return undefined;
  }
  const macBytes = kind === 'click' && parts.length === 6 ? TAG_BYTES : MAC_BYTES;
  const mac = canonical(parts[parts.length - 1] as string, macBytes);
  if (!mac) return undefined;
  const parsed: ParsedTrackingToken = {
    kind,
    projectId,
    mailingId,
    deliveryId,
    sentAt: Number.parseInt(sentAt, 36),
    head: `${projectId}.${mailingId}.${deliveryId}.${sentAt}`,
    mac,
  };
  if (kind === 'click') {
    const index = parts[4] as string;
    if (!NUM.test(index)) return undefined;
    parsed.index = Number.parseInt(index, 36);
    if (parts.length === 7) {
      const encoded = parts[5] as string;
      if (!B64.test(encoded)) return undefined;
      parsed.url = Buffer.from(encoded, 'base64url').toString('utf8');
    }
  }
  return parsed;
}

/** Whether the token `parsed` came from was signed under `secret`; compares in constant time. */
export function verifyTrackingToken(secret: string, parsed: ParsedTrackingToken, token: string): boolean {
  let expected: Buffer;
  if (parsed.kind === 'open') {
    expected = hmac(secret, `open\u0000${parsed.head}`).subarray(0, MAC_BYTES);
  } else if (parsed.url !== undefined) {
    const signed = token.slice(0, token.lastIndexOf('.'));
    expected = hmac(secret, `click-url\u0000${signed}`).subarray(0, MAC_BYTES);
  } else {
    const index = parsed.index as number;
    const slot = (index % LINKS_PER_BLOCK) * TAG_BYTES;
    expected = blockMac(secret, parsed.head, Math.floor(index / LINKS_PER_BLOCK)).subarray(
      slot,
      slot + TAG_BYTES,
    );
  }
  return expected.length === parsed.mac.length && timingSafeEqual(parsed.mac, expected);
}

function blockMac(secret: string, head: string, block: number): Buffer {
  return hmac(secret, `click\u0000${head}\u0000${block}`);
}

// A version tag and the kind before the fields: an open's token is never a click's, nor the reverse.
function hmac(secret: string, message: string): Buffer {
  return createHmac('sha256', secret).update(`mailroom-track:v1\u0000${message}`, 'utf8').digest();
}

function b64(bytes: Buffer): string {
  return bytes.toString('base64url');
}

/** The bytes of a base64url text of exactly `bytes` bytes in its one canonical spelling, or undefined. */
function canonical(text: string, bytes: number): Buffer | undefined {
  if (!B64.test(text) || text.length !== Math.ceil((bytes * 4) / 3)) return undefined;
  const decoded = Buffer.from(text, 'base64url');
  return decoded.length === bytes && decoded.toString('base64url') === text ? decoded : undefined;
}
