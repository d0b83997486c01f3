/**
 * Turns an `OutgoingMessage` into finished MIME bytes with the transport's {@link MimeBuilder}, signed
 * with DKIM when the message carries a key. Shared by the SMTP and the outbox transports, so both put
 * the same bytes on the wire or on disk.
 */
import { isMailroomError, MailroomError } from '../base/errors.js';
import type { OutgoingMessage } from '../transport/transport.js';
import type { DkimSigner } from './dkim-signer.js';
import type { MimeBuilder, TextEncoding } from './mime-builder.js';

export type { TextEncoding } from './mime-builder.js';

/** The default {@link TextEncoding}: sending speed first. */
export const DEFAULT_TEXT_ENCODING: TextEncoding = 'base64';

/** What building needs besides the message. */
export interface SignedMimeSettings {
  builder: MimeBuilder;
  signer: DkimSigner;
}

/**
 * Builds the message and signs it when `message.dkim` is set.
 * @throws MailroomError `TRANSPORT_PERMANENT` when the message cannot be built or signed.
 */
export function buildSignedMime(message: OutgoingMessage, settings: SignedMimeSettings): Buffer {
  try {
    const raw = settings.builder.build(message);
    return message.dkim ? settings.signer.sign(raw, message.dkim) : raw;
  } catch (error) {
    if (isMailroomError(error)) throw error;
    throw new MailroomError('TRANSPORT_PERMANENT', `could not build message ${message.messageId}`, {
      cause: error,
      source: 'mime',
    });
  }
}
