/**
 * The SMTP and outbox transports' MIME building as a module that a worker thread can load (the
 * `Transport.composer` contract): the core renders and builds messages off the main thread, then hands
 * the bytes to `sendRaw`.
 */
import type { CreateComposer, TransportComposer } from '@mailroom/core';
import { composeMessage, DEFAULT_TEXT_ENCODING, type TextEncoding } from './compose-message.js';
import { createDkimSigner } from './dkim-signer.js';
import { createMimeBuilder } from './mime-builder.js';

/**
 * A composer with its own MIME builder (each thread builds a mailing's shared parts once) and DKIM key
 * cache (each thread parses a key once). Options: `textEncoding`.
 */
export const createComposer: CreateComposer = (options) => {
  const textEncoding: TextEncoding =
    options.textEncoding === 'quoted-printable' ? 'quoted-printable' : DEFAULT_TEXT_ENCODING;
  const settings = { builder: createMimeBuilder({ textEncoding }), signer: createDkimSigner() };
  return async (message) => composeMessage(message, settings);
};

/** The `composer` a transport declares for `textEncoding`. */
export function rawComposer(textEncoding: TextEncoding): TransportComposer {
  // Run from source (.ts, development and tests) or from the build (.js): the sibling of this very file.
  const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return { module: new URL(`./raw-composer${extension}`, import.meta.url).href, options: { textEncoding } };
}
