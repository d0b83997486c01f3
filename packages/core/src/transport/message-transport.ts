/**
 * The way from the Transport contract before issue 34 (`send` took the message as fields and the
 * transport built the MIME) to the one of now (`send` takes the core's bytes): a wrapper for a transport
 * written against the old contract, and the fields of a message for a transport that declares
 * `capabilities.structured`.
 */
import { MailroomError } from '../base/errors.js';
import type {
  OutgoingMailingContext,
  OutgoingMessage,
  RawOutgoingMessage,
  SendReceipt,
  Transport,
} from './transport.js';

/**
 * A transport written against the contract before issue 34: `send` takes the message as fields and builds
 * (and, with `capabilities.dkim`, signs) the MIME itself.
 * @deprecated Write `send(message: RawOutgoingMessage)` (the core's bytes) instead; wrap an old one with
 * {@link fromMessageTransport} meanwhile. Removed in 1.0.
 */
export interface MessageTransport {
  /** Short name for logs. */
  readonly name: string;
  /** Its abilities: `dkim`, whether it signs with `message.dkim` itself; its pool size. */
  readonly capabilities: { readonly dkim: boolean; readonly maxConcurrency: number };
  /** Send one message, given as fields, to its one recipient. */
  send(message: OutgoingMessage): Promise<SendReceipt>;
  /** As {@link Transport.routeOf}. */
  routeOf?(from: string, mailing: OutgoingMailingContext): string | undefined;
  /** As {@link Transport.routeNames}. */
  readonly routeNames?: readonly string[];
  /** As {@link Transport.verify}. */
  verify?(): Promise<void>;
  /** As {@link Transport.close}. */
  close?(): Promise<void>;
}

/**
 * A transport of the old contract as one of the new: it declares `fields`, so the core hands it the
 * message's fields (with `envelopeFrom`, `mailing` and the `dkim` key, as before) and never signs for it
 * (it signs itself when it did). Its messages are composed on the main thread.
 * @deprecated Port the transport to `send(message: RawOutgoingMessage)`; removed in 1.0.
 * @example
 * createMailroom({ store, transport: fromMessageTransport(myOldTransport) });
 */
export function fromMessageTransport(transport: MessageTransport): Transport {
  const wrapped: Transport = {
    name: transport.name,
    capabilities: { dkim: false, maxConcurrency: transport.capabilities.maxConcurrency, fields: true },
    async send(message) {
      return transport.send(fieldsFor(message, transport.name));
    },
  };
  return Object.assign(
    wrapped,
    transport.routeOf ? { routeOf: transport.routeOf.bind(transport) } : {},
    transport.routeNames ? { routeNames: transport.routeNames } : {},
    transport.verify ? { verify: transport.verify.bind(transport) } : {},
    transport.close ? { close: transport.close.bind(transport) } : {},
  );
}

/** The fields the core gives a transport that declares `capabilities.fields`; refused without them. */
function fieldsFor(message: RawOutgoingMessage, transportName: string): OutgoingMessage {
  if (message.fields) return message.fields;
  throw new MailroomError(
    'TRANSPORT_PERMANENT',
    `${transportName}: message ${message.messageId} came without its fields; compose it with composeFor(transport, message)`,
    { source: transportName },
  );
}
