/**
 * The inbound SMTP listener: receives DSNs, ARF reports and replies mailed to the bounce domain and hands
 * each message to the engine (`mailroom.inbound.receive`), which decides what it changes. I/O only: the
 * listener refuses every recipient outside the bounce domain at RCPT (never an open relay), caps sizes,
 * connections and rates, offers STARTTLS when given a key and certificate, and has no AUTH.
 */
import type { AddressInfo } from 'node:net';
import { type Logger, MAX_INBOUND_BYTES, type MailroomInbound, silentLogger } from '@mailroom/core';
import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import { headerGuard } from './header-guard.js';
import { rateBuckets } from './rate-buckets.js';
import { trustedRelays } from './trusted-relays.js';
import { windowedLog } from './windowed-log.js';

/** Options of {@link inboundSmtpServer}. */
export interface InboundServerOptions {
  /** The engine's inbound role: `mailroom.inbound` (it must have the `bounces` option). */
  inbound: MailroomInbound;
  /** @default 25 */
  port?: number;
  /** @default '0.0.0.0' */
  host?: string;
  /** Name in the greeting and EHLO reply. @default the bounce domain */
  name?: string;
  /**
   * Largest message accepted, in bytes (announced with SIZE; a larger one is refused with 552).
   * @default 10 MiB
   */
  maxBytes?: number;
  /** Connections open at once, from everyone (each may hold up to `maxBytes` while it is read). @default 50 */
  maxConnections?: number;
  /** Connections open at once from one IP address (trusted relays excepted). @default 10 */
  maxConnectionsPerIp?: number;
  /**
   * Messages one IP address may send per minute (trusted relays excepted): a bucket of this many that
   * refills evenly over the minute; past it, messages are deferred with 451 (the relay tries again
   * later). The default lets one relay return 100 reports a second.
   * @default 6000
   */
  maxMessagesPerMinute?: number;
  /**
   * Messages to a forged or edited return-path token one IP address may send per minute (trusted relays
   * excepted) that are still taken, with 250, and dropped unparsed. Past it, such a recipient is refused
   * at RCPT with 550, before the client sends a byte of the message: a flood of forged tokens costs the
   * listener a command and an HMAC per message, never its data. A relay that edits the tokens of real
   * reports sends far fewer than this.
   * @default 60
   */
  maxForgedPerMinute?: number;
  /**
   * Networks in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`, or one address) whose clients are exempt
   * from the per-IP limits: your own relays, which return every report of a large broadcast.
   * @default []
   */
  trustedRelays?: readonly string[];
  /** Recipients of one message. @default 20 */
  maxRecipients?: number;
  /**
   * Milliseconds of client silence before the connection is closed: what a connection that never sends
   * costs at most. @default 60000
   */
  socketTimeoutMs?: number;
  /** Milliseconds `close()` waits for open connections before it drops them. @default 5000 */
  closeTimeoutMs?: number;
  /**
   * Lines in a message's top-level header (folded lines count). A message with more is refused with 552
   * as its bytes arrive, without keeping them or parsing it. @default 1000
   */
  maxHeaderLines?: number;
  /** Bytes of a message's top-level header; more is refused as `maxHeaderLines` is. @default 64 KiB */
  maxHeaderBytes?: number;
  /**
   * Milliseconds of the window in which floods (forged return-path tokens, refused connections, oversized
   * headers) are counted and logged once, instead of a line per event. @default 60000
   */
  abuseLogWindowMs?: number;
  /** PEM key and certificate: STARTTLS is offered only with both. */
  tls?: { key: string | Buffer; cert: string | Buffer };
  logger?: Logger;
}

/** A running listener. */
export interface InboundServer {
  readonly host: string;
  /** The port it listens on (the real one when 0 was asked). */
  readonly port: number;
  /** Stops accepting, closes open connections, resolves when closed. */
  close(): Promise<void>;
}

const RATE_WINDOW_MS = 60_000;

/**
 * Starts the inbound SMTP listener.
 *
 * @example
 * const mailroom = createMailroom({ store, transport, bounces: { domain: 'bounces.acme.test' } });
 * const server = await inboundSmtpServer({ inbound: mailroom.inbound, port: 2525 });
 */
export async function inboundSmtpServer(options: InboundServerOptions): Promise<InboundServer> {
  const { inbound } = options;
  if (!inbound.enabled || !inbound.domain) {
    throw new TypeError('inboundSmtpServer: the engine has no bounces option (bounces: { domain })');
  }
  const logger = options.logger ?? silentLogger;
  const maxBytes = options.maxBytes ?? MAX_INBOUND_BYTES;
  const maxPerIp = options.maxConnectionsPerIp ?? 10;
  const maxPerMinute = options.maxMessagesPerMinute ?? 6000;
  if (!(maxPerMinute >= 1)) throw new TypeError('inboundSmtpServer: maxMessagesPerMinute must be at least 1');
  const maxForged = options.maxForgedPerMinute ?? 60;
  if (!(maxForged >= 0)) throw new TypeError('inboundSmtpServer: maxForgedPerMinute must be at least 0');
  const isTrusted = trustedRelays(options.trustedRelays ?? []);
  const maxRecipients = options.maxRecipients ?? 20;
  const maxHeaderLines = options.maxHeaderLines ?? 1000;
  const maxHeaderBytes = options.maxHeaderBytes ?? 64 * 1024;
  const window = options.abuseLogWindowMs ?? 60_000;
  const forgedLog = windowedLog(logger, 'inbound SMTP: forged or edited return-path token ignored', window);
  const crowdLog = windowedLog(logger, 'inbound SMTP: too many connections from one address', window);
  const headerLog = windowedLog(logger, 'inbound SMTP: message header over the cap refused', window);
  const open = new Map<string, number>();
  // The sessions counted in `open`: the library calls onClose for refused connections too, and
  // decrementing for those would let every refusal admit one more connection past the cap.
  const counted = new Set<string>();
  const messages = rateBuckets(maxPerMinute, RATE_WINDOW_MS);
  // Forged tokens taken (and dropped) per address; past it they are refused at RCPT.
  const forgedTaken = rateBuckets(maxForged, RATE_WINDOW_MS);
  const tls = options.tls;

  const fail = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });
  const ipOf = (session: SMTPServerSession) => session.remoteAddress ?? 'unknown';

  // Loaded here: most users of this package only send.
  const { SMTPServer } = await import('smtp-server');
  const server = new SMTPServer({
    name: options.name ?? inbound.domain,
    banner: 'Mailroom bounce processor',
    size: maxBytes,
    // SIZE is announced without its value, so that a declared size over the cap reaches onMailFrom
    // (refused and counted there) instead of being refused unseen by the library.
    hideSize: true,
    maxClients: options.maxConnections ?? 50,
    socketTimeout: options.socketTimeoutMs ?? 60_000,
    closeTimeout: options.closeTimeoutMs ?? 5_000,
    // A PTR lookup per connection would let a flood of connections make a flood of DNS queries.
    disableReverseLookup: true,
    authOptional: true,
    disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(tls ? { key: tls.key, cert: tls.cert } : {}),
    logger: false,
    onConnect(session, callback) {
      const ip = ipOf(session);
      const count = (open.get(ip) ?? 0) + 1;
      if (count > maxPerIp && !isTrusted(session.remoteAddress)) {
        crowdLog.note({ remoteAddress: ip, limit: maxPerIp });
        return callback(fail(421, 'Too many connections from your address, try again later'));
      }
      open.set(ip, count);
      counted.add(session.id);
      callback();
    },
    onClose(session) {
      if (!counted.delete(session.id)) return;
      const ip = ipOf(session);
      const count = (open.get(ip) ?? 1) - 1;
      if (count <= 0) open.delete(ip);
      else open.set(ip, count);
    },
    onMailFrom(address, session, callback) {
      const ip = ipOf(session);
      const declared = Number((address.args as { SIZE?: unknown } | undefined)?.SIZE ?? 0);
      if (declared > maxBytes) {
        inbound.refused('too-large', { remoteAddress: ip });
        return callback(fail(552, `5.3.4 Message too big (limit ${maxBytes} bytes)`));
      }
      if (!isTrusted(session.remoteAddress) && !messages.take(ip, Date.now())) {
        inbound.refused('rate-limited', { remoteAddress: ip });
        return callback(fail(451, '4.7.1 Too many messages, slow down'));
      }
      callback();
    },
    onRcptTo(address, session, callback) {
      if (!inbound.acceptsRecipient(address.address)) {
        logger.warn(
          { remoteAddress: ipOf(session), rcptTo: address.address },
          'inbound SMTP: recipient outside the bounce domain refused',
        );
        return callback(
          fail(550, '5.7.1 Relaying denied: this server takes mail for its bounce domain only'),
        );
      }
      if (session.envelope.rcptTo.length >= maxRecipients)
        return callback(fail(452, '4.5.3 Too many recipients'));
      const ip = ipOf(session);
      if (isTrusted(session.remoteAddress) || !forgedTaken.exhausted(ip, Date.now())) return callback();
      // This address has used its allowance of forged tokens: the next one is refused here, unread.
      inbound.recipientVerdict(address.address).then(
        (verdict) => {
          if (verdict !== 'forged') return callback();
          forgedLog.note({ remoteAddress: ip, rcptTo: address.address });
          inbound.refused('forged-token', { remoteAddress: ip, envelopeTo: [address.address] });
          callback(fail(550, '5.1.1 Return-path token not recognised'));
        },
        // The key could not be loaded (the store down): the message takes the usual way.
        () => callback(),
      );
    },
    onData(stream, session, callback) {
      receive(stream, session).then(
        (reply) => callback(null, reply),
        (error: Error) => callback(error),
      );
    },
  });

  async function receive(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<string> {
    const envelopeTo = session.envelope.rcptTo.map((r) => r.address);
    // Decided before a byte is kept: when every recipient is a return path whose token fails its MAC (one
    // HMAC each, no store read), the message is drained unparsed. It is still taken with 250, as every
    // ignored message is: refusing a null-sender report gains nothing, and a bounce processor never
    // bounces what it ignores.
    // A failure to load the key (the store down) decides nothing here: the message takes the usual way.
    const verdicts = await Promise.all(
      envelopeTo.map((to) => inbound.recipientVerdict(to).catch(() => 'accept' as const)),
    );
    const forged = verdicts.length > 0 && verdicts.every((v) => v === 'forged');
    const chunks: Buffer[] = [];
    let bytes = 0;
    const header = headerGuard(maxHeaderLines, maxHeaderBytes);
    let keep = !forged;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      // Past a cap the rest is read and dropped (the client is still sending it); what was kept goes.
      if (keep && (bytes > maxBytes || !header.feed(chunk))) {
        keep = false;
        chunks.length = 0;
      }
      if (keep) chunks.push(chunk);
    }
    const log = { remoteAddress: ipOf(session), bytes };
    if (header.problem) {
      headerLog.note({ ...log, problem: header.problem, maxHeaderLines, maxHeaderBytes });
      inbound.refused('header-too-large', { remoteAddress: ipOf(session) });
      throw fail(
        552,
        `5.3.4 Message header too large (at most ${maxHeaderLines} lines, ${maxHeaderBytes} bytes)`,
      );
    }
    if (stream.sizeExceeded || bytes > maxBytes) {
      inbound.refused('too-large', { remoteAddress: ipOf(session) });
      throw fail(552, `5.3.4 Message too big (limit ${maxBytes} bytes)`);
    }
    if (forged) {
      if (!isTrusted(session.remoteAddress)) forgedTaken.take(ipOf(session), Date.now());
      forgedLog.note({ remoteAddress: ipOf(session), rcptTo: envelopeTo[0] });
      inbound.refused('forged-token', { remoteAddress: ipOf(session), envelopeTo });
      return 'Ok: ignored (forged or edited return-path token)';
    }
    const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    try {
      const receipt = await inbound.receive(Buffer.concat(chunks), {
        envelopeTo: session.envelope.rcptTo.map((r) => r.address),
        envelopeFrom,
        remoteAddress: ipOf(session),
      });
      // Taken either way: a bounce processor never bounces what it ignores (that would loop).
      return `Ok: ${receipt.outcome}`;
    } catch (error) {
      const deferred = (error as { code?: unknown } | null)?.code === 'INBOUND_DEFERRED';
      if (deferred) logger.info(log, 'inbound SMTP: report arrived before the send was recorded; deferred');
      else logger.error({ ...log, err: error }, 'inbound SMTP: message could not be processed; deferred');
      throw fail(451, '4.3.0 Temporary failure, try again later');
    }
  }

  server.on('error', (error: Error) => logger.warn({ err: error }, 'inbound SMTP: connection error'));
  const host = options.host ?? '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port ?? 25, host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;
  logger.info({ host, port, domain: inbound.domain, starttls: tls !== undefined }, 'inbound SMTP listening');
  return {
    host,
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
