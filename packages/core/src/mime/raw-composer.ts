/**
 * The core's MIME building as a module that a render thread loads: the core renders and builds messages
 * off the main thread (`WorkerOptions.renderThreads`), then hands the bytes to the transport's `send`.
 */
import type { CreateComposer, TransportComposer } from '../transport/transport.js';
import { createDkimSigner } from './dkim-signer.js';
import { createMimeBuilder } from './mime-builder.js';
import { buildSignedMime, DEFAULT_TEXT_ENCODING, type TextEncoding } from './signed-mime.js';

/**
 * A composer with its own MIME builder (each thread builds a mailing's shared parts once) and DKIM key
 * cache (each thread parses a key once). Options: `textEncoding`; `dkim: false` leaves every message
 * unsigned, whatever key it carries (for a provider that signs itself, as Amazon SES does).
 *
 * This is the one MIME composition of Mailroom's transports: the SMTP, outbox and SES transports all
 * put these bytes on the wire.
 */
export const createComposer: CreateComposer = (options) => {
  const textEncoding: TextEncoding =
    options.textEncoding === 'quoted-printable' ? 'quoted-printable' : DEFAULT_TEXT_ENCODING;
  const settings = { builder: createMimeBuilder({ textEncoding }), signer: createDkimSigner() };
  if (options.dkim === false) {
    return async ({ dkim: _unsigned, ...message }) => buildSignedMime(message, settings);
  }
  return async (message) => buildSignedMime(message, settings);
};

/**
 * The `composer` a transport declares for `textEncoding` (and `dkim: false` when it never signs), so
 * the engine can build its messages on render threads.
 */
export function rawComposer(
  textEncoding: TextEncoding,
  settings: { dkim?: boolean } = {},
): TransportComposer {
  // This very module: from source it is this file, and in the build (one bundle, dist/index.js) it is
  // the bundle, which exports `createComposer` too. (A sibling `raw-composer.js` does not exist there.)
  const options: TransportComposer['options'] =
    settings.dkim === false ? { textEncoding, dkim: false } : { textEncoding };
  return { module: import.meta.url, options };
}
