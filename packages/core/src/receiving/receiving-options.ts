import type { DnsResolver } from '../domains/dns-lookup.js';
import type { ParsedReceived } from './parse-received.js';
import type { InboundMail, SpamVerdict } from './receiving-types.js';

/** The default of `ReceivingOptions.maxMessageBytes`: 25 MiB. */
export const MAX_MESSAGE_BYTES_DEFAULT = 25 * 1024 * 1024;
/** The default of `ReceivingOptions.retentionDays`. */
export const RECEIVED_RETENTION_DAYS_DEFAULT = 30;
/** The default of `ReceivingOptions.attachmentUrlTtlMs`: 7 days. */
export const ATTACHMENT_URL_TTL_DEFAULT = 7 * 86_400_000;

/** Options of receiving mail for the app (`MailroomOptions.receiving`). See docs/inbound-routes.md. */
export interface ReceivingOptions {
  /**
   * The in-process handler of routes whose destination is `handler`: called once the message is stored.
   * A throw is logged; the message stays stored (and listed by the API).
   */
  onInbound?: (mail: InboundMail) => void | Promise<void>;
  /** The app's spam verdict, asked before the message is stored; its answer is the message's `spam`. */
  spamVerdict?: (mail: ParsedReceived, raw: Uint8Array) => SpamVerdict | Promise<SpamVerdict>;
  /** DNS servers for SPF, DKIM and DMARC (`['127.0.0.1:5353']`). @default the system's */
  dnsServers?: string[];
  /** A resolver of your own for the checks (wins over `dnsServers`). */
  resolver?: DnsResolver;
  /**
   * Threads that read and judge received messages (mailparser; mailauth's SPF, DKIM, DMARC and ARC) off
   * the main thread, started with the first message; the message is still stored by the main thread
   * before its 250. 0 reads them on the main thread. @default 1
   */
  parseThreads?: number;
  /** This server's name, written into the `Authentication-Results` header. @default 'mailroom' */
  authServId?: string;
  /**
   * The public base URL of the HTTP adapter: attachments get `url`s
   * `<baseUrl>/inbound/attachments/<token>`, signed and expiring. Without it `url` is null (the bytes are
   * still kept, and `receiving.attachment(token)` serves them in-process).
   * @example 'https://mail.example.com/api'
   */
  baseUrl?: string | (() => string);
  /** The key attachment URLs are signed with. @default generated once and kept in the store's settings */
  secret?: string;
  /**
   * How long an attachment URL works (at least; its expiry is rounded up to the hour). The webhook
   * payload's URLs count from the message's arrival; the API's (`getMessage`, `listMessages`) from the
   * read. @default 604_800_000 (7 days)
   */
  attachmentUrlTtlMs?: number;
  /**
   * Largest message a route takes, in bytes (a project's setting may lower or raise it); past it the
   * listener answers 552. The listener's own `maxBytes` defaults to it. @default 26_214_400 (25 MiB)
   */
  maxMessageBytes?: number;
  /**
   * Days a received message and its raw bytes (attachments included) are kept before the running
   * worker's retention sweep deletes them (a project's setting wins). `Infinity` keeps them. @default 30
   */
  retentionDays?: number;
}

/** The engine options receiving reads. */
export interface ReceivingEngineOptions {
  /** Receiving mail for the app through routes (issue 40). */
  receiving?: ReceivingOptions;
}
