import { readFileSync } from 'node:fs';
import type {
  BouncesOptions,
  Logger,
  MailroomInbound,
  MailroomReceiving,
  NotificationOptions,
} from '@mailroom/core';
import type { InboundServer, InboundServerOptions } from '@mailroom/smtp';
import { UsageError } from '../output/cli-errors.js';
import type { FlagSpec, ParsedArgs } from './args.js';

/** `--bounce-domain`: the VERP return paths of `serve` and `worker`. */
export const BOUNCE_FLAGS: FlagSpec = { 'bounce-domain': { type: 'string' } };

/** Help line of {@link BOUNCE_FLAGS}. */
export const BOUNCE_FLAGS_HELP = `  --bounce-domain DOMAIN
                     every message's envelope sender (Return-Path) becomes b+TOKEN@DOMAIN, so
                     bounces and complaints come back to the inbound listener (default:
                     MAILROOM_BOUNCE_DOMAIN; none: the envelope sender is the From address).
                     Tokens are signed with MAILROOM_BOUNCE_SECRET, else with a secret generated
                     once and kept in the database`;

/** Flags of the inbound SMTP listener (`serve --inbound-port`, `inbound`). */
export const INBOUND_FLAGS: FlagSpec = {
  'inbound-host': { type: 'string' },
  'inbound-rate': { type: 'string' },
  'inbound-trusted-relay': { type: 'string', multiple: true },
  'inbound-max-connections': { type: 'string' },
  'inbound-max-connections-per-ip': { type: 'string' },
  'inbound-idle-timeout': { type: 'string' },
  'inbound-max-header-lines': { type: 'string' },
  'inbound-max-header-bytes': { type: 'string' },
  'inbound-max-forged': { type: 'string' },
  'tls-key': { type: 'string' },
  'tls-cert': { type: 'string' },
};

/** Help lines of {@link INBOUND_FLAGS}. */
export const INBOUND_FLAGS_HELP = `  --inbound-host HOST
                     interface of the inbound SMTP listener (default: 0.0.0.0)
  --inbound-rate N   reports one IP address may return per minute; more are deferred
                     with 451, and the relay tries again later (default: 6000, 100 a second)
  --inbound-trusted-relay CIDR
                     a network (10.0.0.0/8) or address of your own relay, exempt from the
                     per-IP limits (repeatable)
  --inbound-max-connections N
                     connections open at once, from everyone (default: 50)
  --inbound-max-connections-per-ip N
                     connections open at once from one address (default: 10)
  --inbound-idle-timeout SECONDS
                     client silence before a connection is closed (default: 60)
  --inbound-max-header-lines N, --inbound-max-header-bytes N
                     a message whose header has more is refused with 552, unread
                     (defaults: 1000 lines, 65536 bytes)
  --inbound-max-forged N
                     messages to a forged return-path token one address may send per minute
                     that are taken and dropped; past it they are refused at RCPT (default: 60)
  --tls-key FILE --tls-cert FILE
                     PEM key and certificate: the inbound listener offers STARTTLS`;

/** The `bounces` option from `--bounce-domain` (or `MAILROOM_BOUNCE_DOMAIN`) and `MAILROOM_BOUNCE_SECRET`. */
export function bouncesOf(
  args: ParsedArgs,
  env: Readonly<Record<string, string | undefined>>,
  command: string,
): BouncesOptions | undefined {
  const domain = (args.string('bounce-domain') ?? env.MAILROOM_BOUNCE_DOMAIN)?.trim();
  if (!domain) return undefined;
  if (!/^[A-Za-z0-9.-]+\.[A-Za-z0-9-]+$/.test(domain)) {
    throw new UsageError(`--bounce-domain must be a domain name, got '${domain}'`, command);
  }
  const secret = env.MAILROOM_BOUNCE_SECRET;
  if (secret !== undefined && secret !== '' && secret.length < 16) {
    throw new UsageError('MAILROOM_BOUNCE_SECRET must have at least 16 characters', command);
  }
  return { domain, ...(secret ? { secret } : {}) };
}

/** Where and how the inbound listener listens. */
export interface InboundListen {
  port: number;
  host: string;
  tls?: { key: string; cert: string };
  /** Messages per minute per IP address (`--inbound-rate`). */
  maxMessagesPerMinute?: number;
  /** Networks exempt from the per-IP limits (`--inbound-trusted-relay`). */
  trustedRelays?: string[];
  /** The listener's abuse limits (`--inbound-max-*`, `--inbound-idle-timeout`); absent ones keep their defaults. */
  limits?: Pick<
    InboundServerOptions,
    | 'maxConnections'
    | 'maxConnectionsPerIp'
    | 'socketTimeoutMs'
    | 'maxHeaderLines'
    | 'maxHeaderBytes'
    | 'maxForgedPerMinute'
  >;
}

/**
 * The listener settings from `--inbound-host`, `--inbound-rate`, `--inbound-trusted-relay`, `--tls-key`
 * and `--tls-cert`, for `port`. Async: `@mailroom/smtp` (nodemailer, the SMTP server), which checks the
 * relays, is loaded only when some are given, so that the commands that do not listen never load it.
 */
export async function inboundListenOf(
  args: ParsedArgs,
  port: number,
  command: string,
): Promise<InboundListen> {
  const rate = args.int('inbound-rate', { min: 1, max: 10_000_000 });
  const limits: NonNullable<InboundListen['limits']> = {};
  const maxConnections = args.int('inbound-max-connections', { min: 1, max: 100_000 });
  if (maxConnections !== undefined) limits.maxConnections = maxConnections;
  const perIp = args.int('inbound-max-connections-per-ip', { min: 1, max: 100_000 });
  if (perIp !== undefined) limits.maxConnectionsPerIp = perIp;
  const idle = args.int('inbound-idle-timeout', { min: 1, max: 3600 });
  if (idle !== undefined) limits.socketTimeoutMs = idle * 1000;
  const headerLines = args.int('inbound-max-header-lines', { min: 10, max: 1_000_000 });
  if (headerLines !== undefined) limits.maxHeaderLines = headerLines;
  const headerBytes = args.int('inbound-max-header-bytes', { min: 1024, max: 64 * 1024 * 1024 });
  if (headerBytes !== undefined) limits.maxHeaderBytes = headerBytes;
  const forged = args.int('inbound-max-forged', { min: 0, max: 10_000_000 });
  if (forged !== undefined) limits.maxForgedPerMinute = forged;
  const relays = args.list('inbound-trusted-relay');
  if (relays.length > 0) {
    const { trustedRelays } = await import('@mailroom/smtp');
    try {
      trustedRelays(relays);
    } catch (error) {
      throw new UsageError(`--inbound-trusted-relay: ${(error as Error).message}`, command);
    }
  }
  const keyFile = args.string('tls-key');
  const certFile = args.string('tls-cert');
  if ((keyFile === undefined) !== (certFile === undefined)) {
    throw new UsageError('--tls-key and --tls-cert go together', command);
  }
  const read = (file: string, flag: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      throw new UsageError(`${flag}: cannot read ${file}`, command);
    }
  };
  return {
    port,
    host: args.string('inbound-host') ?? '0.0.0.0',
    ...(rate !== undefined ? { maxMessagesPerMinute: rate } : {}),
    ...(relays.length > 0 ? { trustedRelays: relays } : {}),
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
    ...(keyFile && certFile
      ? { tls: { key: read(keyFile, '--tls-key'), cert: read(certFile, '--tls-cert') } }
      : {}),
  };
}

/**
 * Starts the inbound SMTP listener of an engine: the bounce domain, and with `receiving` the addresses of
 * the projects' receiving routes (docs/inbound-routes.md). `@mailroom/smtp` is loaded here, when a
 * listener starts.
 */
export async function startInbound(
  inbound: MailroomInbound,
  listen: InboundListen,
  logger: Logger,
  receiving?: MailroomReceiving,
): Promise<InboundServer> {
  const { inboundSmtpServer } = await import('@mailroom/smtp');
  return inboundSmtpServer({
    inbound,
    ...(receiving ? { receiving } : {}),
    port: listen.port,
    host: listen.host,
    logger,
    ...(listen.tls ? { tls: listen.tls } : {}),
    ...(listen.maxMessagesPerMinute ? { maxMessagesPerMinute: listen.maxMessagesPerMinute } : {}),
    ...(listen.trustedRelays ? { trustedRelays: listen.trustedRelays } : {}),
    ...listen.limits,
  });
}

/** Help lines of the provider notifications' environment variables. */
export const NOTIFICATIONS_HELP = `Provider notifications of bounces and complaints (POST /inbound/ses, /inbound/mailgun):
  MAILROOM_SES_TOPIC_ARNS        comma-separated SNS topic ARNs: turns on /inbound/ses
                                 (SNS signatures are checked; subscriptions confirmed)
  MAILROOM_MAILGUN_SIGNING_KEY   the Mailgun webhook signing key: turns on /inbound/mailgun`;

/** The `notifications` option from `MAILROOM_SES_TOPIC_ARNS` and `MAILROOM_MAILGUN_SIGNING_KEY`. */
export function notificationsOf(
  env: Readonly<Record<string, string | undefined>>,
): NotificationOptions | undefined {
  const topics = (env.MAILROOM_SES_TOPIC_ARNS ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  const signingKey = env.MAILROOM_MAILGUN_SIGNING_KEY?.trim();
  if (topics.length === 0 && !signingKey) return undefined;
  return {
    ...(topics.length > 0 ? { ses: { topicArns: topics } } : {}),
    ...(signingKey ? { mailgun: { signingKey } } : {}),
  };
}
