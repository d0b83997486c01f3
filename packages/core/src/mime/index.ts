// MIME composition and DKIM signing: the one message format every transport of Mailroom puts on the wire
// (SMTP, outbox, SES), in core because it is logic, not I/O, and because several adapters share it.
export {
  createDkimSigner,
  DKIM_SIGNED_HEADERS,
  type DkimKey,
  type DkimSigner,
  type DkimSignerOptions,
} from './dkim-signer.js';
export {
  createMimeBuilder,
  type MimeBuilder,
  type MimeBuilderOptions,
  type TextEncoding,
  wireAddress,
} from './mime-builder.js';
export { composeFor, type OutgoingComposer, outgoingComposer } from './outgoing-composer.js';
export { createComposer, rawComposer } from './raw-composer.js';
export { buildSignedMime, DEFAULT_TEXT_ENCODING, type SignedMimeSettings } from './signed-mime.js';
