/**
 * The SMTP transport: nodemailer's pooled SMTP client behind the `Transport` contract.
 */
import type { ConnectionOptions } from 'node:tls';
import type { RawOutgoingMessage, SendReceipt, Transport } from '@mailroom/core';
import { DEFAULT_TEXT_ENCODING, type TextEncoding } from '@mailroom/core';
import nodemailer, { type SentMessageInfo, type Transporter } from 'nodemailer';
import { type PoolSender, poolSender } from './pool-sender.js';
import { toTransportError } from './smtp-error.js';

const TRANSPORT_NAME = 'smtp';

/** The transport {@link smtpTransport} returns: `verify` and `close` are always there. */
export type SmtpTransport = Transport &
  Required<Pick<Transport, 'verify' | 'close'>> & {
    /**
     * The same function as `send`.
     * @deprecated `send` takes the bytes now (a transport's one job); removed in 1.0.
     */
    sendRaw: Transport['send'];
  };

/** Connection and pool settings of {@link smtpTransport}. */
export interface SmtpTransportOptions {
  /** Host name or IP of the relay. */
  host: string;
  /**
   * Port of the relay.
   * @default 587, or 465 when `secure`
   */
  port?: number;
  /**
   * TLS from the first byte (port 465). When false, STARTTLS is still used if the server offers it.
   * @default false
   */
  secure?: boolean;
  /** Credentials for AUTH. */
  auth?: { user: string; pass: string };
  /** Fail unless the connection is upgraded with STARTTLS. */
  requireTLS?: boolean;
  /** Never upgrade with STARTTLS. */
  ignoreTLS?: boolean;
  /** Options for `tls.connect` (for example `servername`, `ca`). */
  tls?: ConnectionOptions;
  /**
   * Name sent with EHLO.
   * @default the machine's host name
   */
  name?: string;
  /**
   * Connections kept open at once. The default matches the worker's default `concurrency` (8): with
   * fewer connections than sends at once, the sends beyond them wait in the pool while the relay is
   * idle between each connection's replies (fewer connections were markedly slower to a loopback relay:
   * BENCHMARKS.md, delivery-corpus, session 5). Raise both together; a relay may limit connections per
   * client.
   * @default 8
   */
  maxConnections?: number;
  /**
   * Messages sent over one connection before it is replaced.
   * @default 100
   */
  maxMessages?: number;
  /**
   * Milliseconds to wait for the TCP (and TLS) connection.
   * @default 30000
   */
  connectionTimeout?: number;
  /**
   * Milliseconds to wait for the greeting once connected.
   * @default 30000
   */
  greetingTimeout?: number;
  /**
   * Milliseconds of silence after which a connection is given up (also while waiting for the
   * reply to the final dot).
   * @default 300000
   */
  socketTimeout?: number;
  /**
   * Transfer encoding of text and HTML parts that are not short-lined ASCII. `base64` is the cheaper to
   * build; `quoted-printable` costs more CPU per message and sends fewer bytes of mostly-ASCII HTML (see
   * `TextEncoding`).
   * @default 'base64'
   */
  textEncoding?: TextEncoding;
}

/** What {@link smtpTransport} accepts besides options: settings for an injected transporter. */
export interface SmtpTransporterSettings {
  /**
   * Transfer encoding of text parts, as in {@link SmtpTransportOptions.textEncoding}.
   * @default 'base64'
   */
  textEncoding?: TextEncoding;
}

/**
 * Creates the SMTP transport on nodemailer's pooled SMTP client.
 *
 * - Options: a pool is created with `maxConnections` (default 8, the worker's default concurrency); a message never reads a file or a
 *   URL (`disableFileAccess`, `disableUrlAccess`).
 * - A URL: `smtp://user:pass@host:587` or `smtps://user:pass@host:465` (percent-encode the
 *   credentials); `?maxConnections=10&textEncoding=quoted-printable` are read too.
 * - A nodemailer transporter you built yourself (any transport nodemailer has); it is closed by `close()`.
 *
 * The core composes and DKIM-signs each message (in `textEncoding`, which the transport declares in its
 * capabilities); this transport hands the finished bytes to the pool with their explicit envelope (to an
 * injected transporter through `sendMail({ raw })`), without nodemailer's composer. Failures reject with `TRANSPORT_TRANSIENT`
 * (4xx, timeouts, dropped connections, authentication) or `TRANSPORT_PERMANENT` (5xx), keeping
 * `responseCode`, `command` and `response`. Nothing is retried here: a message is handed to the
 * server at most once per `send`.
 *
 * @example
 * const transport = smtpTransport({ host: 'smtp.example.com', port: 587, auth: { user, pass } });
 * const transport = smtpTransport('smtps://user:pass@smtp.example.com:465');
 */
export function smtpTransport(
  options: SmtpTransportOptions | string | Transporter<SentMessageInfo>,
  settings: SmtpTransporterSettings = {},
): SmtpTransport {
  const { transporter, maxConnections, textEncoding, owned } = resolve(options, settings);
  // Our own pool takes the bytes directly; an injected transporter (any kind) gets them through sendMail.
  const direct = owned ? poolSender((transporter as { transporter?: unknown }).transporter) : undefined;

  async function send(message: RawOutgoingMessage): Promise<SendReceipt> {
    let info: SentMessageInfo;
    try {
      const raw = asBuffer(message.raw);
      info = direct
        ? await direct.send(raw, message.envelope, message.messageId)
        : await transporter.sendMail({ envelope: message.envelope, messageId: message.messageId, raw });
    } catch (error) {
      throw toTransportError(error, TRANSPORT_NAME);
    }
    return toReceipt(message.messageId, info);
  }

  const transport: SmtpTransport = {
    name: TRANSPORT_NAME,
    capabilities: { dkim: true, maxConcurrency: maxConnections, textEncoding },
    send,
    sendRaw: send,

    async verify(): Promise<void> {
      try {
        await transporter.verify();
      } catch (error) {
        throw toTransportError(error, TRANSPORT_NAME);
      }
    },

    async close(): Promise<void> {
      transporter.close();
    },
  };
  if (direct) directSenders.set(transport, direct);
  return transport;
}

const directSenders = new WeakMap<SmtpTransport, PoolSender>();

/**
 * The sender that hands `transport`'s bytes to its pool directly, or undefined when it uses `sendMail`
 * (an injected transporter, or a pool without the members the sender uses). Not exported by the package:
 * tests read its `stats` to see that the direct path is taken.
 */
export function directSender(transport: SmtpTransport): PoolSender | undefined {
  return directSenders.get(transport);
}

/** Connections of a pool this transport creates: as many as the worker's default concurrency. */
const DEFAULT_MAX_CONNECTIONS = 8;

function resolve(
  options: SmtpTransportOptions | string | Transporter<SentMessageInfo>,
  settings: SmtpTransporterSettings,
): {
  transporter: Transporter<SentMessageInfo>;
  maxConnections: number;
  textEncoding: TextEncoding;
  owned: boolean;
} {
  if (typeof options === 'object' && 'sendMail' in options) {
    const pool = options.options as { maxConnections?: unknown };
    return {
      transporter: options,
      // nodemailer's own default for a pool it was given without one.
      maxConnections: typeof pool.maxConnections === 'number' ? pool.maxConnections : 5,
      textEncoding: settings.textEncoding ?? DEFAULT_TEXT_ENCODING,
      owned: false,
    };
  }
  const resolved = typeof options === 'string' ? parseSmtpUrl(options) : options;
  const maxConnections = resolved.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const { textEncoding, ...connection } = resolved;
  const transporter = nodemailer.createTransport({
    ...connection,
    connectionTimeout: resolved.connectionTimeout ?? 30_000,
    greetingTimeout: resolved.greetingTimeout ?? 30_000,
    socketTimeout: resolved.socketTimeout ?? 300_000,
    pool: true,
    maxConnections,
    // The pool re-queues a message only when none of its bytes reached the server: its connection
    // was closed before the greeting, or a reused one proved stale. Once is enough to ride over a
    // relay that closes idle connections; anything more is a retry, and the worker owns retries.
    maxRequeues: 1,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return {
    transporter,
    maxConnections,
    textEncoding: textEncoding ?? settings.textEncoding ?? DEFAULT_TEXT_ENCODING,
    owned: true,
  };
}

/** Reads `smtp://` and `smtps://` URLs. */
function parseSmtpUrl(url: string): SmtpTransportOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError('smtpTransport: not a valid URL (expected smtp://host:port or smtps://host:port)');
  }
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') {
    throw new TypeError(`smtpTransport: unsupported URL scheme ${parsed.protocol} (use smtp: or smtps:)`);
  }
  const options: SmtpTransportOptions = {
    // IPv6 literals come back bracketed from URL.
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    secure: parsed.protocol === 'smtps:',
  };
  if (parsed.port) options.port = Number(parsed.port);
  if (parsed.username || parsed.password) {
    options.auth = { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) };
  }
  const maxConnections = Number(parsed.searchParams.get('maxConnections'));
  if (Number.isInteger(maxConnections) && maxConnections > 0) options.maxConnections = maxConnections;
  const textEncoding = parsed.searchParams.get('textEncoding');
  if (textEncoding === 'base64' || textEncoding === 'quoted-printable') options.textEncoding = textEncoding;
  const name = parsed.searchParams.get('name');
  if (name) options.name = name;
  return options;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function toReceipt(messageId: string, info: SentMessageInfo): SendReceipt {
  const details = info as SentMessageInfo & {
    response?: unknown;
    rejectedErrors?: Array<{ recipient?: string; response?: string; responseCode?: number }>;
  };
  const rejected = (details.rejectedErrors ?? []).map((e) => {
    const entry: SendReceipt['rejected'][number] = { address: e.recipient ?? '', response: e.response ?? '' };
    if (e.responseCode !== undefined) entry.responseCode = e.responseCode;
    return entry;
  });
  for (const address of info.rejected ?? []) {
    if (!rejected.some((r) => r.address === address)) rejected.push({ address, response: '' });
  }
  return {
    messageId,
    accepted: (info.accepted ?? []).map(String),
    rejected,
    response: typeof details.response === 'string' ? details.response : '',
  };
}
