import type { DkimConfig, Mailbox } from './records.js';

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
}

/** A finished message for {@link Transport.sendRaw}: MIME bytes and the SMTP envelope. */
export interface RawOutgoingMessage {
  /** The Message-ID inside `raw`, including angle brackets. */
  messageId: string;
  /** Envelope sender and recipients (`MAIL FROM`, `RCPT TO`). */
  envelope: { from: string; to: string[] };
  /** The whole message (headers and body, CRLF line ends), DKIM-signed if it is to be signed. */
  raw: Uint8Array;
}

/**
 * How a transport builds MIME, as a module any thread can load, so the core can build messages on
 * worker threads (`WorkerOptions.renderThreads`) and hand the bytes to {@link Transport.sendRaw}.
 * The module exports `createComposer(options)`, returning a function from an {@link OutgoingMessage} to
 * its finished bytes (signed with `message.dkim` when set), which rejects with a `MailroomError` as
 * `send` would for a message it cannot build.
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

/** Optional abilities a transport declares as data. */
export interface TransportCapabilities {
  /** The transport signs with `message.dkim` itself. */
  readonly dkim: boolean;
  /** Largest number of sends the transport can usefully run at once (pool size). */
  readonly maxConcurrency: number;
}

/**
 * Hands rendered messages to the outside world (an SMTP relay, a folder, memory).
 *
 * Errors: `send` rejects with a `MailroomError` of code `TRANSPORT_TRANSIENT` (SMTP 4xx, timeout,
 * connection refused or dropped: may pass) or `TRANSPORT_PERMANENT` (SMTP 5xx: will not pass), carrying
 * `responseCode`, `command` and `response` when the server replied. A transport never retries by itself;
 * the worker owns retries.
 */
export interface Transport {
  /** Short name for logs, for example `smtp` or `memory`. */
  readonly name: string;
  /** Optional abilities, as data. */
  readonly capabilities: TransportCapabilities;
  /** Send one message to its one recipient. */
  send(message: OutgoingMessage): Promise<SendReceipt>;
  /**
   * Optional: send a message already built (by the transport's own {@link Transport.composer}, so the
   * bytes are what `send` would have put on the wire). Same errors and receipt as `send`. The core uses
   * it only together with `composer`; a transport without both is always given `send`.
   */
  sendRaw?(message: RawOutgoingMessage): Promise<SendReceipt>;
  /** Optional: how to build this transport's MIME on another thread (see {@link TransportComposer}). */
  readonly composer?: TransportComposer;
  /** Check that the transport can reach its server (for `mailroom serve` start-up). */
  verify?(): Promise<void>;
  /** Close pooled connections. */
  close?(): Promise<void>;
}
