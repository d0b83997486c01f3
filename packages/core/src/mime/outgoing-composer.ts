/**
 * The core's composition for one transport: every message a transport is handed is built here (or, the
 * same way, on a render thread), as the transport's capabilities say: its text encoding, whether the
 * core signs, whether it also wants the fields.
 */
import type {
  OutgoingMessage,
  RawOutgoingMessage,
  TransportCapabilities,
  TransportComposer,
} from '../transport/transport.js';
import { createDkimSigner } from './dkim-signer.js';
import { createMimeBuilder } from './mime-builder.js';
import { rawComposer } from './raw-composer.js';
import { buildSignedMime, DEFAULT_TEXT_ENCODING } from './signed-mime.js';

/** Builds what a transport's `send` takes, for one transport. Keeps the per-mailing parts it built. */
export interface OutgoingComposer {
  /**
   * The finished message: MIME bytes (DKIM-signed with `message.dkim` unless the transport declares
   * `dkim: false`), the envelope (`envelopeFrom`, else From), and the fields when the transport wants them.
   * @throws MailroomError `TRANSPORT_PERMANENT` when the message cannot be built or signed.
   */
  compose(message: OutgoingMessage): RawOutgoingMessage;
  /** The same composition as a module a render thread loads (the engine's `renderThreads`). */
  readonly threadComposer: TransportComposer;
}

/**
 * The composer for a transport of `capabilities`.
 * @example
 * const composer = outgoingComposer(transport.capabilities);
 * await transport.send(composer.compose(message));
 */
export function outgoingComposer(capabilities: TransportCapabilities): OutgoingComposer {
  const textEncoding = capabilities.textEncoding ?? DEFAULT_TEXT_ENCODING;
  const settings = { builder: createMimeBuilder({ textEncoding }), signer: createDkimSigner() };
  const sign = capabilities.dkim;
  const fields = capabilities.fields === true;
  return {
    compose(message) {
      const { dkim: _unsigned, ...unsigned } = message;
      const raw = buildSignedMime(sign ? message : unsigned, settings);
      const outgoing: RawOutgoingMessage = {
        messageId: message.messageId,
        envelope: { from: message.envelopeFrom ?? message.from.address, to: [message.to.address] },
        from: message.from.address,
        raw,
      };
      if (message.mailing) outgoing.mailing = message.mailing;
      if (fields) outgoing.fields = message;
      return outgoing;
    },
    threadComposer: rawComposer(textEncoding, sign ? {} : { dkim: false }),
  };
}

/**
 * One message composed for `transport` as the engine would compose it, for tests and scripts that call a
 * transport's `send` themselves (the engine keeps one composer per worker instead).
 * @example await transport.send(composeFor(transport, { messageId, from, to, subject, text, attachments: [], headers: {} }));
 */
export function composeFor(
  transport: { readonly capabilities: TransportCapabilities },
  message: OutgoingMessage,
): RawOutgoingMessage {
  return outgoingComposer(transport.capabilities).compose(message);
}
