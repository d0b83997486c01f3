/**
 * The inbound SMTP listener: receives DSNs, ARF reports and replies mailed to the bounce domain and hands
 * each message to the engine (`mailroom.inbound.receive`), which decides what it changes. I/O only: the
 * listener refuses every recipient outside the bounce domain at RCPT (never an open relay), caps sizes,
 * connections and rates, offers STARTTLS when given a key and certificate, and has no AUTH. The roles:
 * `connection-policy.ts` (connections per IP), `envelope-policy.ts` (MAIL FROM and RCPT),
 * `forged-tokens.ts` (the allowance of forged return-path tokens), `inbound-data.ts` (DATA).
 */
import type { AddressInfo } from 'node:net';
import type { Logger, MailroomInbound } from '@mailroom/core';
import { connectionPolicy } from './connection-policy.js';
import { envelopePolicy } from './envelope-policy.js';
import { forgedTokens } from './forged-tokens.js';
import { inboundData } from './inbound-data.js';
import { resolveInboundLimits } from './inbound-limits.js';

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
  const limits = resolveInboundLimits(options);
  const { logger } = limits;
  const connections = connectionPolicy(limits);
  const forged = forgedTokens({ inbound, limits });
  const envelope = envelopePolicy({ inbound, limits, forged });
  const receive = inboundData({ inbound, limits, forged });
  const tls = options.tls;

  // Loaded here: most users of this package only send.
  const { SMTPServer } = await import('smtp-server');
  const server = new SMTPServer({
    name: options.name ?? inbound.domain,
    banner: 'Mailroom bounce processor',
    size: limits.maxBytes,
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
    onConnect: connections.onConnect,
    onClose: connections.onClose,
    onMailFrom: envelope.onMailFrom,
    onRcptTo: envelope.onRcptTo,
    onData(stream, session, callback) {
      receive(stream, session).then(
        (reply) => callback(null, reply),
        (error: Error) => callback(error),
      );
    },
  });

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
