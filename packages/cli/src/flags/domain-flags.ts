import { isIP } from 'node:net';
import type { DomainsOptions, SendingPolicy, SpfRelay } from '@mailroom/core';
import { UsageError } from '../output/cli-errors.js';
import type { FlagSpec, ParsedArgs } from './args.js';

/** The flags of what resolves and checks sending domains: DNS servers and the relay SPF names. */
export const DNS_FLAGS: FlagSpec = {
  'dns-server': { type: 'string', multiple: true },
  'relay-ip': { type: 'string', multiple: true },
  'relay-spf': { type: 'string', multiple: true },
};

/** Help lines of {@link DNS_FLAGS}. */
export const DNS_FLAGS_HELP = `  --dns-server HOST:PORT
                     ask this DNS server in the domain checks (repeatable; 127.0.0.1:5353,
                     [::1]:53; default: MAILROOM_DNS_SERVERS, comma-separated, else the system's)
  --relay-ip IP      an address the relay sends from: SPF must pass for it (repeatable;
                     default: MAILROOM_RELAY_IPS, comma-separated)
  --relay-spf MECHANISM
                     an SPF mechanism that names the relay, include:amazonses.com (repeatable;
                     default: MAILROOM_RELAY_SPF, comma-separated). Give every command that adds,
                     lists or checks domains the same relay: the SPF record advised follows it`;

/** The flags of the commands that send (`serve`, `worker`): the DNS flags and the sending policy. */
export const DOMAIN_FLAGS: FlagSpec = {
  ...DNS_FLAGS,
  'domain-sending': { type: 'string' },
};

/** Help lines of {@link DOMAIN_FLAGS}. */
export const DOMAIN_FLAGS_HELP = `  --domain-sending warn|enforce
                     mail from a domain that is not a verified domain of its project: warn sends
                     it and logs once per domain, enforce refuses it with 403 naming the missing
                     record (default: MAILROOM_DOMAIN_SENDING, else warn); see mailroom domain
${DNS_FLAGS_HELP}`;

/** A `HOST:PORT` of a DNS server (`127.0.0.1:5353`, `[::1]:53`, or an address alone for port 53). */
const DNS_SERVER = /^(?:\[([0-9a-f:.]+)\]|([0-9.]+))(?::(\d{1,5}))?$/i;

/**
 * The domains options of the flags and the environment: `--dns-server` (else `MAILROOM_DNS_SERVERS`),
 * `--relay-ip`, `--relay-spf`, `--domain-sending` (else `MAILROOM_DOMAIN_SENDING`), and the key sealing
 * secret `MAILROOM_DKIM_SECRET` (every process that adds, checks or signs must have the same one).
 */
export function domainsOptionsOf(
  args: ParsedArgs,
  env: Readonly<Record<string, string | undefined>>,
  command: string,
  defaultRelay?: SpfRelay,
): DomainsOptions {
  const servers = dnsServersOf(args, env, command);
  const relay = relayOf(args, env, command) ?? defaultRelay;
  const given = args.string('domain-sending') ?? env.MAILROOM_DOMAIN_SENDING?.trim();
  if (given !== undefined && given !== '' && given !== 'warn' && given !== 'enforce') {
    throw new UsageError(`--domain-sending must be warn or enforce, got '${given}'`, command);
  }
  const secret = env.MAILROOM_DKIM_SECRET?.trim();
  if (secret !== undefined && secret !== '' && secret.length < 16) {
    throw new UsageError('MAILROOM_DKIM_SECRET needs at least 16 characters', command);
  }
  return {
    ...(servers.length > 0 ? { dnsServers: servers } : {}),
    ...(relay ? { relay } : {}),
    ...(given ? { sending: given as SendingPolicy } : {}),
    ...(secret ? { secret } : {}),
  };
}

/** `--dns-server` values, else `MAILROOM_DNS_SERVERS`, each checked. */
export function dnsServersOf(
  args: ParsedArgs,
  env: Readonly<Record<string, string | undefined>>,
  command: string,
): string[] {
  const given = args.list('dns-server');
  const servers =
    given.length > 0
      ? given
      : (env.MAILROOM_DNS_SERVERS ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  for (const server of servers) {
    const match = DNS_SERVER.exec(server.trim());
    const address = match?.[1] ?? match?.[2];
    const port = match?.[3] === undefined ? 53 : Number(match[3]);
    if (!address || isIP(address) === 0 || port < 1 || port > 65535) {
      throw new UsageError(
        `--dns-server must be an IP address with an optional port (127.0.0.1:5353, [::1]:53), got '${server}'`,
        command,
      );
    }
  }
  return servers.map((s) => s.trim());
}

/**
 * The relay of `--relay-ip` and `--relay-spf` (else `MAILROOM_RELAY_IPS` and `MAILROOM_RELAY_SPF`), or
 * undefined when none is given.
 */
export function relayOf(
  args: ParsedArgs,
  env: Readonly<Record<string, string | undefined>>,
  command: string,
): SpfRelay | undefined {
  const fromEnv = (name: string) =>
    (env[name] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const given = args.list('relay-ip').length + args.list('relay-spf').length > 0;
  const addresses = given ? args.list('relay-ip') : fromEnv('MAILROOM_RELAY_IPS');
  const mechanisms = given ? args.list('relay-spf') : fromEnv('MAILROOM_RELAY_SPF');
  for (const address of addresses) {
    if (isIP(address) === 0)
      throw new UsageError(`--relay-ip must be an IP address, got '${address}'`, command);
  }
  if (addresses.length === 0 && mechanisms.length === 0) return undefined;
  return {
    ...(addresses.length > 0 ? { addresses } : {}),
    ...(mechanisms.length > 0 ? { mechanisms } : {}),
  };
}

/** The relay SPF names for a delivery target when none is given: Amazon SES documents its include. */
export function sesRelayOf(kind: string): SpfRelay | undefined {
  return kind === 'ses' ? { mechanisms: ['include:amazonses.com'] } : undefined;
}
