import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Open and click tracking tokens. A token names the project, the mailing, the delivery, the time its
 * message was rendered (seconds since the epoch, base 36) and, for a click, the link's index in the
 * mailing's link map; a link whose URL differs per recipient (Liquid in its `href`) also carries that
 * recipient's URL. All of it is covered by an HMAC-SHA256, truncated to 128 bits, under the installation's
 * tracking secret: only the engine can make one, no field can be changed, and a forged token is refused
 * before anything is looked up. The address is never in a token.
 *
 * Shapes (every field URL-safe, so a token needs no escaping in a path):
 * - open:  `<projectId>.<mailingId>.<deliveryId>.<sentAt36>.<mac>`
 * - click: `<projectId>.<mailingId>.<deliveryId>.<sentAt36>.<index36>.<mac>` or, with the URL,
 *          `<projectId>.<mailingId>.<deliveryId>.<sentAt36>.<index36>.<base64url URL>.<mac>`
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
  mac: Buffer;
}

/** Tracking secrets shorter than this are refused. */
export const MIN_TRACKING_SECRET_LENGTH = 16;

const MAC_BYTES = 16;
const MAC_CHARS = 22;
const ID = /^[A-Za-z0-9_-]{1,128}$/;
const NUM = /^[0-9a-z]{1,11}$/;
const B64 = /^[A-Za-z0-9_-]+$/;
/** A URL carried in a token: longer ones are not rewritten (the link stays untracked). */
export const MAX_TOKEN_URL_LENGTH = 2048;

/** The token of one open. */
export function signOpenToken(secret: string, f: TrackingTokenFields): string {
  const head = `${f.projectId}.${f.mailingId}.${f.deliveryId}.${f.sentAt.toString(36)}`;
  return `${head}.${mac(secret, 'open', head)}`;
}

/** The token of one click. */
export function signClickToken(secret: string, f: ClickTokenFields): string {
  let head = `${f.projectId}.${f.mailingId}.${f.deliveryId}.${f.sentAt.toString(36)}.${f.index.toString(36)}`;
  if (f.url !== undefined) head += `.${Buffer.from(f.url, 'utf8').toString('base64url')}`;
  return `${head}.${mac(secret, 'click', head)}`;
}

/** Splits a token, or undefined when it has not the shape of one of `kind` (nothing to look up then). */
export function parseTrackingToken(kind: 'open' | 'click', token: string): ParsedTrackingToken | undefined {
  const parts = token.split('.');
  const expected = kind === 'open' ? [5] : [6, 7];
  if (!expected.includes(parts.length)) return undefined;
  const [projectId, mailingId, deliveryId, sentAt] = parts as [string, string, string, string];
  const macText = parts[parts.length - 1] as string;
  if (!ID.test(projectId) || !ID.test(mailingId) || !ID.test(deliveryId) || !NUM.test(sentAt)) {
    return undefined;
  }
  if (macText.length !== MAC_CHARS || !B64.test(macText)) return undefined;
  const macBytes = Buffer.from(macText, 'base64url');
  // 22 characters carry 132 bits: a canonical encoding of 16 bytes has the last 4 at zero.
  if (macBytes.length !== MAC_BYTES || macBytes.toString('base64url') !== macText) return undefined;
  const parsed: ParsedTrackingToken = {
    kind,
    projectId,
    mailingId,
    deliveryId,
    sentAt: Number.parseInt(sentAt, 36),
    mac: macBytes,
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
  const head = token.slice(0, token.lastIndexOf('.'));
  const expected = Buffer.from(mac(secret, parsed.kind, head), 'base64url');
  return timingSafeEqual(parsed.mac, expected);
}

// A version tag and the kind before the fields: an open's token is never a click's, nor the reverse.
function mac(secret: string, kind: 'open' | 'click', head: string): string {
  return createHmac('sha256', secret)
    .update(`mailroom-track:v1\u0000${kind}\u0000${head}`, 'utf8')
    .digest()
    .subarray(0, MAC_BYTES)
    .toString('base64url');
}
