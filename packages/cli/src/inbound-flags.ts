import { readFileSync } from 'node:fs';
import type { BouncesOptions, Logger, MailroomInbound } from '@mailroom/core';
import { type InboundServer, inboundSmtpServer } from '@mailroom/smtp';
import type { FlagSpec, ParsedArgs } from './args.js';
import { UsageError } from './cli-errors.js';

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
  'tls-key': { type: 'string' },
  'tls-cert': { type: 'string' },
};

/** Help lines of {@link INBOUND_FLAGS}. */
export const INBOUND_FLAGS_HELP = `  --inbound-host HOST
                     interface of the inbound SMTP listener (default: 0.0.0.0)
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
}

/** The listener settings from `--inbound-host`, `--tls-key` and `--tls-cert`, for `port`. */
export function inboundListenOf(args: ParsedArgs, port: number, command: string): InboundListen {
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
    ...(keyFile && certFile
      ? { tls: { key: read(keyFile, '--tls-key'), cert: read(certFile, '--tls-cert') } }
      : {}),
  };
}

/** Starts the inbound SMTP listener of an engine. */
export function startInbound(
  inbound: MailroomInbound,
  listen: InboundListen,
  logger: Logger,
): Promise<InboundServer> {
  return inboundSmtpServer({
    inbound,
    port: listen.port,
    host: listen.host,
    logger,
    ...(listen.tls ? { tls: listen.tls } : {}),
  });
}
