import type { DkimConfig, Mailbox, MailingKind } from '../store/records.js';

/** An attachment as the transport receives it: always bytes, never a URL or a path. */
export interface OutgoingAttachment {
  /** File name with extension. */
  filename: string;
  /** MIME type. */
  contentType: string;
  /** The bytes. */
  content: Uint8Array;
}

/** A calendar invitation, already serialized as iCalendar text. */
export interface OutgoingCalendar {
  /** `REQUEST` for an invitation. */
  method: string;
  /** The iCalendar (RFC 5545) text. */
  content: string;
  /** File name of the part, for example `invite.ics`. */
  filename: string;
}

/**
 * Where a message comes from, for transports that choose a route by it (`routeTransport`). The engine
 * sets it on every message it sends; a message built by hand may leave it out, and transports that do
 * not route ignore it. Never part of the MIME.
 */
export interface OutgoingMailingContext {
  /** The project that sends it. */
  projectId: string;
  /** `message` (transactional) or `broadcast`. */
  kind: MailingKind;
  /** The mailing's ref (`msg_...` or the broadcast's). */
  ref: string;
}

/** A fully rendered message for one recipient. Header values never contain CR or LF. */
export interface OutgoingMessage {
  /** RFC 5322 Message-ID including angle brackets; stable across retries of one delivery. */
  messageId: string;
  from: Mailbox;
  to: Mailbox;
  replyTo?: string;
  subject: string;
  /** Plain-text alternative (always present). */
  text: string;
  /** HTML alternative. */
  html?: string;
  attachments: OutgoingAttachment[];
  calendar?: OutgoingCalendar;
  /**
   * Extra headers, already validated (no CR/LF), for example `List-Unsubscribe` and
   * `List-Unsubscribe-Post`.
   */
  headers: Record<string, string>;
  /** DKIM key for the sender's domain, if configured. */
  dkim?: DkimConfig & { domain: string };
  /**
   * The envelope sender: SMTP `MAIL FROM`, which the receiving server records as `Return-Path` and where
   * bounces go. The engine sets it to the delivery's VERP address (`b+<token>@<bounce domain>`) when it
   * has the `bounces` option. It never changes the `From` header. Every transport honours it.
   * @default from.address
   */
  envelopeFrom?: string;
  /** The project and mailing it belongs to (see {@link OutgoingMailingContext}); optional. */
  mailing?: OutgoingMailingContext;
}

/** What the transport reports for an accepted message. */
export interface SendReceipt {
  /** The Message-ID that was sent. */
  messageId: string;
  /** Recipients the server accepted. */
  accepted: string[];
  /** Recipients the server rejected at RCPT (permanent), with the reply. */
  rejected: Array<{ address: string; response: string; responseCode?: number }>;
  /** The server's final reply, for example `250 2.0.0 Ok: queued as ABC`. */
  response: string;
  /**
   * The provider's own id for the message when it has one besides the Message-ID, for example the
   * `MessageId` Amazon SES answers (the id its bounce and complaint notifications name).
   */
  providerMessageId?: string;
  /**
   * Name of the transport that sent it: `routeTransport` names the route's transport (or its fallback),
   * and transports whose reply is not an SMTP server's name themselves (`ses`). When set, the engine
   * stores the reply as
   * `<transport>: <response>` in the delivery's `lastResponse`, so the dashboard and the `delivery`
   * event tell which transport sent it.
   */
  transport?: string;
}

/**
 * What a transport is handed: one finished message, composed and (unless the transport declares
 * `capabilities.dkim: false`) DKIM-signed by the core, as MIME bytes with its SMTP envelope. A transport
 * delivers these bytes; it builds nothing.
 */
export interface RawOutgoingMessage {
  /** The Message-ID inside `raw`, including angle brackets. */
  messageId: string;
  /** Envelope sender and recipients (`MAIL FROM`, `RCPT TO`): the sender is the VERP address with `bounces`. */
  envelope: { from: string; to: string[] };
  /**
   * The address of the `From` header (the sender identity), for a transport that chooses by sender
   * (`routeTransport`'s `senderDomain`): the envelope sender may be a VERP return path.
   * @default envelope.from
   */
  from?: string;
  /** The whole message (headers and body, CRLF line ends), DKIM-signed if it is to be signed. */
  raw: Uint8Array;
  /** The project and mailing it belongs to, as {@link OutgoingMessage.mailing}; optional. */
  mailing?: OutgoingMailingContext;
  /**
   * The same message as fields (the structured form the core composed `raw` from), given only to a
   * transport that declares `capabilities.fields`: a test outbox (`memoryTransport`) or an API transport
   * that takes fields rather than MIME. Documented here so such a transport needs no MIME parser.
   */
  fields?: OutgoingMessage;
}

/**
 * Transfer encoding of text parts that are not plain short-lined ASCII (those stay 7bit), and of
 * non-ASCII header words. `base64` is the cheaper to build (Buffer base64 is native, quoted-printable is
 * written byte by byte); `quoted-printable` keeps the source readable and sends fewer bytes of
 * mostly-ASCII HTML. Build costs: BENCHMARKS.md, `delivery-broadcast` ("The in-process run").
 */
export type TextEncoding = 'base64' | 'quoted-printable';

/**
 * What a transport declares as data: how many sends it runs at once, and how the core should compose
 * the bytes it is handed.
 */
export interface TransportCapabilities {
  /**
   * The core signs messages from a sender with a DKIM key (its domain's, or the sender's own) before
   * handing them over. `false`: they go unsigned, for a provider that signs itself.
   */
  readonly dkim: boolean;
  /** Largest number of sends the transport can usefully run at once (pool size). */
  readonly maxConcurrency: number;
  /** Transfer encoding the core builds the text parts with. @default 'base64' */
  readonly textEncoding?: TextEncoding;
  /**
   * The transport also wants the message as fields ({@link RawOutgoingMessage.fields}). The core then
   * renders on the main thread (the fields are not carried back from render threads). @default false
   */
  readonly fields?: boolean;
}

/**
 * How the core builds MIME on a render thread: a module that exports `createComposer(options)`, returning
 * a function from an {@link OutgoingMessage} to its finished bytes. Internal to the engine since
 * transports deliver bytes; kept for the render threads.
 * @deprecated A transport no longer declares a composer: the core composes every message. Kept until 1.0.
 */
export interface TransportComposer {
  /** URL (`file:`) of the ES module. */
  readonly module: string;
  /** Options for `createComposer`; structured-cloneable (they cross to another thread). */
  readonly options: Record<string, string | number | boolean | null>;
}

/** The signature of a {@link TransportComposer} module's `createComposer` export. */
export type CreateComposer = (
  options: TransportComposer['options'],
) => (message: OutgoingMessage) => Promise<Uint8Array>;

/**
 * Delivers finished messages to the outside world (an SMTP relay, a provider's API, a folder, memory):
 * one job, `send`. The core renders, composes and signs (`@mailroom/core`'s MIME composer); the transport
 * hands the bytes over.
 *
 * Errors: `send` rejects with a `MailroomError` of code `TRANSPORT_TRANSIENT` (SMTP 4xx, timeout,
 * connection refused or dropped: may pass) or `TRANSPORT_PERMANENT` (SMTP 5xx: will not pass), carrying
 * `responseCode`, `command` and `response` when the server replied. A transport never retries by itself;
 * the worker owns retries. A transient error may also say what the worker should do besides retrying
 * the message, in `backpressure`: `slow-down` (the provider throttles: fewer sends at once, a short
 * pause; SMTP 421 and 454 mean it without saying), `pause` (the account may not send for now: the
 * worker stops sending for a while and the pause never makes a delivery fail), or `none`.
 */
export interface Transport {
  /** Short name for logs, for example `smtp` or `memory`. */
  readonly name: string;
  /** Optional abilities and how the core composes for it, as data. */
  readonly capabilities: TransportCapabilities;
  /** Deliver one finished message to its one recipient (`envelope.to`). */
  send(message: RawOutgoingMessage): Promise<SendReceipt>;
  /**
   * Optional, for a transport that routes to others (`routeTransport`): the name of the route that takes
   * a message from `from` (the sender's address) with this mailing context, undefined when no named
   * route does. The engine's warm-up per route (`warmup.routes`) reads it before the send.
   */
  routeOf?(from: string, mailing: OutgoingMailingContext): string | undefined;
  /** Optional, with `routeOf`: the names of its routes (a warm-up schedule naming another is refused). */
  readonly routeNames?: readonly string[];
  /** Check that the transport can reach its server (for `mailroom serve` start-up). */
  verify?(): Promise<void>;
  /** Close pooled connections. */
  close?(): Promise<void>;
}

/**
 * The reply the engine stores for a sent delivery (`lastResponse`): the receipt's `response`, prefixed
 * with `<transport>: ` when the receipt names the transport that sent it.
 */
export function receiptResponse(receipt: SendReceipt): string {
  return receipt.transport ? `${receipt.transport}: ${receipt.response}` : receipt.response;
}

/**
 * The transport a stored reply names (see {@link receiptResponse}), for example `ses` in
 * `ses: 250 Ok 0100...`; undefined for a reply without one (SMTP replies start with their code).
 */
export function sentVia(lastResponse: string | null | undefined): string | undefined {
  return lastResponse ? /^([a-z][a-z0-9._-]*): /i.exec(lastResponse)?.[1] : undefined;
}
