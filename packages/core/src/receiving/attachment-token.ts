import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The tokens of attachment URLs (issue 40). A token names one attachment of one received message and its
 * expiry, and carries an HMAC-SHA256, under the installation's attachment secret, of all of them: only the
 * server can make one, and an edited token (another message, attachment, project or expiry) is refused.
 *
 * Shape: `<project id>.<message id>.<index>.<expiry, ms in base 36>.<base64url MAC>`, URL-safe as made.
 */

/** What a token names. */
export interface AttachmentRef {
  projectId: string;
  messageId: string;
  /** The attachment's position in the message's `attachments`. */
  index: number;
  /** Milliseconds since the epoch after which the URL is expired. */
  expiresAt: number;
}

const DOMAIN = 'mailroom-inbound-attachment:v1';
const TOKEN =
  /^([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{1,64})\.([0-9]{1,4})\.([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/;

/** The token of one attachment's URL. */
export function signAttachmentToken(secret: string, ref: AttachmentRef): string {
  return `${ref.projectId}.${ref.messageId}.${ref.index}.${ref.expiresAt.toString(36)}.${mac(secret, ref).toString('base64url')}`;
}

/** What a token names when its MAC is right (expired or not); undefined for anything else. */
export function verifyAttachmentToken(secret: string, token: string): AttachmentRef | undefined {
  const m = TOKEN.exec(token);
  if (!m) return undefined;
  const given = Buffer.from(m[5] as string, 'base64url');
  if (given.length !== 32 || given.toString('base64url') !== m[5]) return undefined;
  const ref: AttachmentRef = {
    projectId: m[1] as string,
    messageId: m[2] as string,
    index: Number(m[3]),
    expiresAt: Number.parseInt(m[4] as string, 36),
  };
  if (!Number.isSafeInteger(ref.expiresAt)) return undefined;
  return timingSafeEqual(given, mac(secret, ref)) ? ref : undefined;
}

function mac(secret: string, ref: AttachmentRef): Buffer {
  return createHmac('sha256', secret)
    .update([DOMAIN, ref.projectId, ref.messageId, String(ref.index), String(ref.expiresAt)].join('\u0000'))
    .digest();
}
