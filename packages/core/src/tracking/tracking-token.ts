import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Open and click tracking tokens. A token names the project, the mailing, the delivery and the time its
 * message was rendered (seconds since the epoch, base 36); a click's also names the link's index in the
 * mailing's link map, and for a link with Liquid in its `href`, the values its Liquid rendered to for this
 * recipient. HMAC-SHA256 under the installation's tracking secret covers what a token must not change:
 * only the engine can make one, and a forged token is refused before anything is looked up. The address
 * is never in a token.
 *
 * Shapes (every field URL-safe, so a token needs no escaping in a path), with `<head>` =
 * `<projectId>.<mailingId>.<deliveryId>.<sentAt36>`:
 * - open: `<head>.<open tag>`;
 * - click on a fixed link: `<head>.<index36>.<click tag>`;
 * - click on a Liquid link: `<head>.<index36>.<values>.<links>.<tag>`.
 *
 * One HMAC per message signs the open and every fixed link: the delivery's MAC over the head, whose first
 * half is the open tag and second half the click tag (a click token does not give away the open tag). The
 * link index of a fixed click is outside the MAC: the token can name any fixed link of the mailing, and
 * the server redirects only to the URL the mailing's link map holds at that index (out of range, or a
 * Liquid entry: 404), so there is no open redirect and a recipient can forge nothing but a click on a link
 * of a mailing sent to them.
 *
 * A Liquid link's URL is the link map entry's static text with the recipient's rendered values between
 * (see `linkShape`). Its tag is an HMAC over the head, the values and `<links>`, the set (a bit map, base64url)
 * of the link indexes that rendered with exactly those values in this message: links sharing the values
 * (a contact id in every link of a newsletter) share one HMAC, and the server accepts the token only for an
 * index in the set. So a redirect goes only to a URL that was in the message.
 */

/** What a token stands for. */
export interface TrackingTokenFields {
  projectId: string;
  mailingId: string;
  deliveryId: string;
  /** When the message was rendered, in whole seconds since the epoch. */
  sentAt: number;
}

/** A click's fields: the link, and its rendered Liquid values when its `href` has Liquid. */
export interface ClickTokenFields extends TrackingTokenFields {
  /** The link's index in the mailing's link map. */
  index: number;
  /** The values the link's Liquid rendered to, in order; absent for a fixed link. */
  values?: readonly string[];
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
  /** Clicks of a Liquid link: the rendered values. */
  values?: string[];
  /** The head of the token (the fields before the index), as signed. */
  head: string;
  /** Clicks of a Liquid link: the `<values>.<links>` fields, as signed. */
  signedValues?: string;
  /** Clicks of a Liquid link: the indexes the values are signed for (a bit map). */
  links?: Buffer;
  mac: Buffer;
}

/** Tracking secrets shorter than this are refused. */
export const MIN_TRACKING_SECRET_LENGTH = 16;
/** A rendered Liquid `href` longer than this is not rewritten (the link stays untracked). */
export const MAX_TOKEN_URL_LENGTH = 2048;

const TAG_BYTES = 16;
const ID = /^[A-Za-z0-9_-]{1,128}$/;
const NUM = /^[0-9a-z]{1,11}$/;
const B64 = /^[A-Za-z0-9_-]+$/;
const VALUES = /^[A-Za-z0-9_~-]*$/;

/** The head of a delivery's tokens. */
function headOf(f: TrackingTokenFields): string {
  return `${f.projectId}.${f.mailingId}.${f.deliveryId}.${f.sentAt.toString(36)}`;
}

/** The delivery's MAC: the open tag, then the click tag of its fixed links. */
function deliveryMac(secret: string, head: string): Buffer {
  return hmac(secret, `delivery\u0000${head}`);
}

function valuesMac(secret: string, head: string, signedValues: string): Buffer {
  return hmac(secret, `click-values\u0000${head}\u0000${signedValues}`).subarray(0, TAG_BYTES);
}

/** Signs the tokens of one delivery's message (one HMAC for the open and the fixed links). */
export interface DeliverySigner {
  /** `<head>.`: what every token of the message starts with. */
  readonly head: string;
  /** The open token. */
  readonly open: string;
  /** `.<click tag>`: what a fixed link's token ends with, after its index. */
  readonly fixedSuffix: string;
  /**
   * `.<values>.<links>.<tag>`: what a Liquid link's token ends with, after its index, for `values` at
   * the link indexes `indexes` (every link of the message that rendered exactly these values).
   */
  valuesSuffix(values: readonly string[], indexes: readonly number[]): string;
}

/** The signer of one delivery's message. */
export function deliverySigner(secret: string, f: TrackingTokenFields): DeliverySigner {
  const head = headOf(f);
  const mac = deliveryMac(secret, head);
  return {
    head: `${head}.`,
    open: `${head}.${b64(mac.subarray(0, TAG_BYTES))}`,
    fixedSuffix: `.${b64(mac.subarray(TAG_BYTES, 2 * TAG_BYTES))}`,
    valuesSuffix(values, indexes) {
      const signed = `${encodeValues(values)}.${b64(bitMap(indexes))}`;
      return `.${signed}.${b64(valuesMac(secret, head, signed))}`;
    },
  };
}

/** The token of one open. */
export function signOpenToken(secret: string, f: TrackingTokenFields): string {
  return deliverySigner(secret, f).open;
}

/** The token of one click (its values, if any, signed for its index alone). */
export function signClickToken(secret: string, f: ClickTokenFields): string {
  const signer = deliverySigner(secret, f);
  const at = `${signer.head}${f.index.toString(36)}`;
  return f.values === undefined
    ? `${at}${signer.fixedSuffix}`
    : `${at}${signer.valuesSuffix(f.values, [f.index])}`;
}

/** Splits a token, or undefined when it has not the shape of one of `kind` (nothing to look up then). */
export function parseTrackingToken(kind: 'open' | 'click', token: string): ParsedTrackingToken | undefined {
  const parts = token.split('.');
  const expected = kind === 'open' ? [5] : [6, 8];
  if (!expected.includes(parts.length)) return undefined;
  const [projectId, mailingId, deliveryId, sentAt] = parts as [string, string, string, string];
  if (!ID.test(projectId) || !ID.test(mailingId) || !ID.test(deliveryId) || !NUM.test(sentAt)) {
    return undefined;
  }
  const mac = canonical(parts[parts.length - 1] as string, TAG_BYTES);
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
    if (parts.length === 8) {
      const [values, links] = [parts[5] as string, parts[6] as string];
      if (!VALUES.test(values) || !B64.test(links)) return undefined;
      parsed.values = values.split('~').map((v) => Buffer.from(v, 'base64url').toString('utf8'));
      parsed.signedValues = `${values}.${links}`;
      parsed.links = Buffer.from(links, 'base64url');
    }
  }
  return parsed;
}

/**
 * Whether the token `parsed` came from was signed under `secret` (and, for a Liquid link's, its values
 * were signed for its index); compares in constant time.
 */
export function verifyTrackingToken(secret: string, parsed: ParsedTrackingToken): boolean {
  let expected: Buffer;
  if (parsed.signedValues !== undefined) {
    const index = parsed.index as number;
    const links = parsed.links as Buffer;
    if (index >= links.length * 8 || ((links[index >> 3] as number) & (1 << (index & 7))) === 0) {
      return false;
    }
    expected = valuesMac(secret, parsed.head, parsed.signedValues);
  } else {
    const mac = deliveryMac(secret, parsed.head);
    expected = parsed.kind === 'open' ? mac.subarray(0, TAG_BYTES) : mac.subarray(TAG_BYTES, 2 * TAG_BYTES);
  }
  return expected.length === parsed.mac.length && timingSafeEqual(parsed.mac, expected);
}

/** Values as a token carries them: each base64url, joined by `~` (not in the base64url alphabet). */
function encodeValues(values: readonly string[]): string {
  let out = '';
  for (let i = 0; i < values.length; i++) {
    out += (i === 0 ? '' : '~') + Buffer.from(values[i] as string, 'utf8').toString('base64url');
  }
  return out;
}

/** The bit map of `indexes` (bit `i` of byte `i >> 3`). */
function bitMap(indexes: readonly number[]): Buffer {
  let max = 0;
  for (const i of indexes) if (i > max) max = i;
  const bytes = Buffer.alloc((max >> 3) + 1);
  for (const i of indexes) bytes[i >> 3] = (bytes[i >> 3] as number) | (1 << (i & 7));
  return bytes;
}

// A version tag and the kind before the fields: an open's token is never a click's, nor the reverse.
function hmac(secret: string, message: string): Buffer {
  return createHmac('sha256', secret).update(`mailroom-track:v2\u0000${message}`, 'utf8').digest();
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
