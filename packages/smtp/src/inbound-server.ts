/**
 * The inbound SMTP listener: receives DSNs, ARF reports and replies mailed to the bounce domain and hands
 * each message to the engine (`mailroom.inbound.receive`), which decides what it changes; given the
 * engine's receiving role, it also takes mail for the addresses of receiving routes (`mailroom.receiving`). I/O only: the
 * listener refuses every recipient outside the bounce domain at RCPT (never an open relay), caps sizes,
 * connections and rates, offers STARTTLS when given a key and certificate, and has no AUTH. The roles:
 * `connection-policy.ts` (connections per IP), `envelope-policy.ts` (MAIL FROM and RCPT),
 * `forged-tokens.ts` (the allowance of forged return-path tokens), `inbound-data.ts` (DATA).
 */
import type { AddressInfo } from 'node:net';
import { connectionPolicy } from './connection-policy.js';
import { envelopePolicy } from './envelope-policy.js';
import { forgedTokens } from './forged-tokens.js';
import { inboundData } from './inbound-data.js';
import { resolveInboundLimits } from './inbound-limits.js';
import type { InboundServerOptions } from './inbound-server-options.js';

export type { InboundServerOptions } from './inbound-server-options.js';

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
  const { inbound, receiving } = options;
  if ((!inbound.enabled || !inbound.domain) && !receiving) {
    throw new TypeError(
      'inboundSmtpServer: the engine has no bounces option (bounces: { domain }) and no receiving role was given',
    );
  }
  const limits = resolveInboundLimits(options);
  const { logger } = limits;
  const connections = connectionPolicy(limits);
  const forged = forgedTokens({ inbound, limits });
  const envelope = envelopePolicy({ inbound, receiving, limits, forged });
  const receive = inboundData({ inbound, receiving, limits, forged });
  const tls = options.tls;

  // Loaded here: most users of this package only send.
  const { SMTPServer } = await import('smtp-server');
  const server = new SMTPServer({
    name: options.name ?? inbound.domain ?? 'mailroom',
    banner: receiving ? 'Mailroom' : 'Mailroom bounce processor',
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
  // The threads that read received mail load now (the first messages are read here meanwhile).
  receiving?.warm().catch((error: unknown) => {
    logger.error({ err: error }, 'inbound SMTP: a thread that reads received mail did not start');
  });
  logger.info(
    { host, port, domain: inbound.domain, receiving: receiving !== undefined, starttls: tls !== undefined },
    'inbound SMTP listening',
  );
  return {
    host,
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
