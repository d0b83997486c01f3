/**
 * Hands finished MIME bytes to nodemailer's SMTP pool directly: no `sendMail` (which wraps raw bytes in
 * a MailComposer and pipes them through its streams) and no per-byte dot-stuffing stream.
 *
 * The pool keeps everything that matters about connections: pooling, `maxConnections`, `maxMessages`,
 * `maxRequeues`, timeouts, AUTH and STARTTLS, and the error objects `toTransportError` classifies. This
 * module gives the pool a minimal mail object whose message is the bytes, and gives each connection a
 * DATA writer that checks the bytes with native searches and writes them to the socket in one go
 * (dot-stuffing, and line-break repair, only when the bytes need it).
 *
 * It relies on a few members of nodemailer's SMTPPool, PoolResource and SMTPConnection that are not part
 * of its documented API; each is checked before use and, when one is missing, the stock path (the
 * connection's own data stream) is used instead, which is slower but sends the same bytes. `stats` says
 * which path was taken; `nodemailer` is held to the minor these members were read from (package.json),
 * and a test against a real server fails when the direct path is not taken.
 */
import type { Socket } from 'node:net';
import { wireAddress } from '@mailroom/core';
import type { SentMessageInfo } from 'nodemailer';

/** Which DATA path a pool's messages took. */
export interface DataPathStats {
  /** Messages whose DATA the direct writer wrote. */
  direct: number;
  /** Why a connection used nodemailer's own data stream instead, when one did (the latest reason). */
  fallback?: string;
}

/** Sends raw messages through one pool. */
export interface PoolSender {
  /** Which DATA path the messages took: a test's window on the members of nodemailer this relies on. */
  readonly stats: DataPathStats;
  /** Sends `raw` (CRLF line ends) to the envelope's recipients; rejects with nodemailer's error. */
  send(
    raw: Buffer,
    envelope: { from: string; to: readonly string[] },
    messageId: string,
  ): Promise<SentMessageInfo>;
}

type Callback = (error: Error | null, info?: SentMessageInfo) => void;

/** What the pool reads from a mail object (`lib/smtp-pool/index.js`, `pool-resource.js`). */
interface PoolMail {
  data: Record<string, never>;
  message: {
    getHeader(name: string): string | undefined;
    messageId(): string;
    getEnvelope(): { from: string; to: string[] };
    createReadStream(): RawMessageSource;
  };
}

interface SmtpPoolInternals {
  send(mail: PoolMail, callback: Callback): unknown;
  _createConnection(): PoolResourceInternals;
}

interface PoolResourceInternals {
  connection?: SmtpConnectionInternals;
  send(mail: PoolMail, callback: Callback): unknown;
}

interface SmtpConnectionInternals {
  options: { lmtp?: unknown; debug?: unknown };
  _socket?: Socket;
  _responseActions: Array<(reply: string) => void>;
  _actionSMTPStream(reply: string, callback: (error: Error | null, reply?: string) => void): void;
  _createSendStream(callback: (error: Error | null, reply?: string) => void): unknown;
}

/**
 * A sender on `pool` (the `transporter.transporter` of a pooled nodemailer transporter), or undefined
 * when it is not an SMTP pool of the expected shape (the caller then keeps `sendMail`).
 */
export function poolSender(pool: unknown): PoolSender | undefined {
  if (!isPool(pool)) return undefined;
  const stats: DataPathStats = { direct: 0 };
  const createConnection = pool._createConnection;
  pool._createConnection = function (this: SmtpPoolInternals) {
    const resource = createConnection.call(this);
    const send = resource.send;
    // A resource connects on its first send and then calls send again: by then it has its connection.
    resource.send = function (this: PoolResourceInternals, mail, callback) {
      if (this.connection) leanData(this.connection, stats);
      return send.call(this, mail, callback);
    };
    return resource;
  };
  return {
    stats,
    send(raw, envelope, messageId) {
      // The null sender (`MAIL FROM:<>`, what bounces are sent with) stays empty, not a quoted empty string.
      const from = envelope.from === '' ? '' : wireAddress(envelope.from);
      const to = envelope.to.map(wireAddress);
      const mail: PoolMail = {
        data: {},
        message: {
          getHeader: (name) => (name.toLowerCase() === 'message-id' ? messageId : undefined),
          messageId: () => messageId,
          // A fresh object per call: the connection fills its own fields in, and a requeued message asks again.
          getEnvelope: () => ({ from, to: [...to] }),
          createReadStream: () => new RawMessageSource(raw),
        },
      };
      return new Promise<SentMessageInfo>((resolve, reject) => {
        pool.send(mail, (error, info) => (error ? reject(error) : resolve(info as SentMessageInfo)));
      });
    },
  };
}

function isPool(value: unknown): value is SmtpPoolInternals {
  const pool = value as Partial<SmtpPoolInternals> | null;
  return typeof pool?.send === 'function' && typeof pool._createConnection === 'function';
}

const leaned = new WeakSet<object>();

/** Gives a connection the direct DATA writer, once, when it has what the writer uses. */
function leanData(connection: SmtpConnectionInternals, stats: DataPathStats): void {
  if (leaned.has(connection)) return;
  leaned.add(connection);
  const fallback = stockReason(connection);
  if (fallback) {
    stats.fallback = fallback;
    return;
  }
  const stock = connection._createSendStream;
  connection._createSendStream = function (this: SmtpConnectionInternals, callback) {
    const socket = this._socket;
    if (!socket || !Array.isArray(this._responseActions)) {
      stats.fallback = 'the connection has no socket or _responseActions';
      return stock.call(this, callback);
    }
    this._responseActions.push((reply) => this._actionSMTPStream(reply, callback));
    stats.direct++;
    return new SocketData(socket);
  };
}

/** Why `connection` must keep its own data stream, or undefined when the direct writer can take over. */
function stockReason(connection: SmtpConnectionInternals): string | undefined {
  if (typeof connection._createSendStream !== 'function') return 'SMTPConnection has no _createSendStream';
  if (typeof connection._actionSMTPStream !== 'function') return 'SMTPConnection has no _actionSMTPStream';
  if (!Array.isArray(connection._responseActions)) return 'SMTPConnection has no _responseActions';
  if (connection.options.lmtp) return 'LMTP';
  if (connection.options.debug) return 'debug logging';
  return undefined;
}

/**
 * The message as the connection reads it: `pipe` hands the bytes over whole. `readableDidRead` tells the
 * pool whether any of them went out (a message no byte of which was sent may be requeued).
 */
class RawMessageSource {
  readableDidRead = false;
  constructor(private readonly raw: Buffer) {}

  pipe<T extends { end(chunk: Buffer): unknown }>(target: T): T {
    this.readableDidRead = true;
    target.end(this.raw);
    return target;
  }
}

/** The DATA writer: the message, made SMTP-safe when it is not already, then the final dot, in one write. */
class SocketData {
  outByteCount = 0;
  private readonly chunks: Buffer[] = [];
  constructor(private readonly socket: Socket) {}

  write(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    return true;
  }

  end(chunk?: Buffer): void {
    if (chunk) this.chunks.push(chunk);
    const raw = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
    const data = smtpData(raw);
    const tail = data.length === 0 || endsWithCrlf(data) ? FINAL_DOT : CRLF_FINAL_DOT;
    this.outByteCount = data.length + tail.length;
    this.socket.cork();
    if (data.length > 0) this.socket.write(data);
    this.socket.write(tail);
    this.socket.uncork();
  }
}

const FINAL_DOT = Buffer.from('.\r\n', 'latin1');
const CRLF_FINAL_DOT = Buffer.from('\r\n.\r\n', 'latin1');

function endsWithCrlf(data: Buffer): boolean {
  return data[data.length - 2] === 13 && data[data.length - 1] === 10;
}

/**
 * The bytes as they go between DATA and the final dot: unchanged when every line ends with CRLF and
 * none starts with a dot (what the MIME builder writes; checked with native searches, one per line);
 * otherwise a copy with bare CR and LF made CRLF and a dot doubled at the start of every line, as
 * nodemailer's data stream does (a dot after a bare CR too: SMTP smuggling).
 */
export function smtpData(raw: Buffer): Buffer {
  return isSmtpSafe(raw) ? raw : dotStuff(raw);
}

function isSmtpSafe(raw: Buffer): boolean {
  if (raw[0] === 0x2e) return false;
  let start = 0;
  for (;;) {
    const lf = raw.indexOf(0x0a, start);
    if (lf < 0) return raw.indexOf(0x0d, start) < 0;
    if (lf === 0 || raw[lf - 1] !== 0x0d) return false;
    const cr = raw.indexOf(0x0d, start);
    if (cr !== lf - 1) return false;
    if (raw[lf + 1] === 0x2e) return false;
    start = lf + 1;
  }
}

function dotStuff(raw: Buffer): Buffer {
  const out = Buffer.allocUnsafe(raw.length * 2 + 1);
  let o = 0;
  let previous = 0x0a;
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i] as number;
    if (previous === 0x0d && byte !== 0x0a) {
      out[o++] = 0x0a;
      previous = 0x0a;
    }
    if (byte === 0x0a && previous !== 0x0d) out[o++] = 0x0d;
    if (byte === 0x2e && previous === 0x0a) out[o++] = 0x2e;
    out[o++] = byte;
    previous = byte;
  }
  if (previous === 0x0d) out[o++] = 0x0a;
  return out.subarray(0, o);
}
