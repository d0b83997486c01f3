import { isIP } from 'node:net';
import { buildConnector } from 'undici';
import { MailroomError } from '../base/errors.js';
import type { ConnectTarget, FetchResolver } from './fetch-types.js';
import { refusalOf } from './ip-policy.js';

/** What the connector needs to decide. */
export interface ConnectorPolicy {
  /** Normalized `host:port` keys let through without the address checks. */
  allowHosts: ReadonlySet<string>;
  resolver: FetchResolver;
  connectHook: ((target: ConnectTarget) => void) | undefined;
  /** Time to establish the TCP (and TLS) connection. */
  connectTimeoutMs: number;
}

/**
 * An undici connector that resolves the host once, refuses the connection unless EVERY address of the
 * answer is allowed, and then connects to the checked address itself (never to the name), so no second
 * DNS lookup can swap in another address between the check and the connection. TLS still verifies the
 * certificate against the host name (SNI and identity check use `servername`).
 */
export function createGuardedConnector(policy: ConnectorPolicy): buildConnector.connector {
  const connect = buildConnector({ timeout: policy.connectTimeoutMs });
  return (options, callback) => {
    checkTarget(policy, options.hostname, options.port, options.protocol).then(
      (target) => {
        try {
          policy.connectHook?.(target);
        } catch (error) {
          callback(error instanceof Error ? error : new Error(String(error)), null);
          return;
        }
        const servername = options.servername || (isIP(target.hostname) ? undefined : target.hostname);
        connect({ ...options, hostname: target.address, ...(servername ? { servername } : {}) }, callback);
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null),
    );
  };
}

/** The normalized allow-list key of a host and port: lower-cased host, IPv6 without brackets. */
export function hostKey(hostname: string, port: number): string {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return `${host.toLowerCase()}:${port}`;
}

/** A host name or IPv4 address: letters, digits, `-`, `_` and dots, no scheme, user, path or space. */
const HOST_NAME = /^[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?$/i;

/**
 * Parses an `allowHosts` entry, `HOST:PORT` (`127.0.0.1:8080`, `files.internal:443`, `[::1]:9000`: an IPv6
 * address in brackets), to its normalized {@link hostKey}.
 * @throws MailroomError `VALIDATION_FAILED` for anything else (no port, a port out of 1-65535, a scheme or a
 * path, an IPv6 address without brackets)
 */
export function parseAllowHost(entry: string): string {
  const colon = entry.lastIndexOf(':');
  const host = entry.slice(0, Math.max(colon, 0));
  const portText = entry.slice(colon + 1);
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : Number.NaN;
  const bracketed = host.startsWith('[') && host.endsWith(']') && isIP(host.slice(1, -1)) === 6;
  if (colon <= 0 || !(port >= 1 && port <= 65_535) || !(bracketed || HOST_NAME.test(host))) {
    throw new MailroomError(
      'VALIDATION_FAILED',
      `allowHosts entry '${entry}' is not HOST:PORT (a host name, an IPv4 address or an [IPv6] address in brackets, and a port from 1 to 65535)`,
    );
  }
  return hostKey(host, port);
}

/** Checks a connection target against the policy, as the connector does before it connects. */
export async function checkTarget(
  policy: ConnectorPolicy,
  rawHostname: string,
  rawPort: string,
  protocol: string,
): Promise<ConnectTarget> {
  if (protocol !== 'http:' && protocol !== 'https:') throw refused(`${protocol} URLs are not fetched`);
  const hostname = rawHostname.startsWith('[') ? rawHostname.slice(1, -1) : rawHostname;
  const port = rawPort ? Number(rawPort) : protocol === 'https:' ? 443 : 80;
  const allowListed = policy.allowHosts.has(hostKey(hostname, port));
  let answer: Array<{ address: string; family: number }>;
  if (isIP(hostname) !== 0) {
    answer = [{ address: hostname, family: isIP(hostname) }];
  } else if (endsInNumber(hostname)) {
    // WHATWG URL parsing turns integer, octal and hex hosts into dotted IPv4; anything still looking
    // numeric here came another way and would be read as an address by getaddrinfo: refuse it outright.
    throw refused(`Refused to fetch from ${hostname}: a numeric host that is not a plain IP address`);
  } else {
    try {
      answer = await policy.resolver(hostname);
    } catch (error) {
      throw new MailroomError('FETCH_REFUSED', `Could not resolve ${hostname}`, {
        cause: error,
        retryable: true,
      });
    }
    if (answer.length === 0) throw refused(`Could not resolve ${hostname}: no address`);
  }
  for (const { address } of answer) {
    if (isIP(address) === 0) throw refused(`Refused to fetch from ${hostname}: ${address} is not an address`);
    const why = allowListed ? null : refusalOf(address);
    // One refused address refuses the whole answer: a resolver mixing a public and a private address
    // must not get to choose which one is used.
    if (why !== null) {
      throw refused(
        `Refused to fetch from ${hostname}${answer.length > 1 ? ` (one of ${answer.length} addresses)` : ''}: ${address} is ${why}. ${allowHint(hostname, port)}`,
      );
    }
  }
  const chosen = answer[0] as { address: string; family: number };
  return { hostname, address: chosen.address, family: chosen.family, port, protocol, allowListed };
}

/**
 * What lets a refused host through, in both the embedding's and the CLI's words: a developer's own
 * webhook receiver or file server on loopback is the common case, and the way out is an allow-list entry.
 */
function allowHint(hostname: string, port: number): string {
  const entry = isIP(hostname) === 6 ? `[${hostname}]:${port}` : `${hostname}:${port}`;
  return `To allow this host, add '${entry}' to fetch.allowHosts (CLI: --allow-host ${entry}, or MAILROOM_ALLOW_HOSTS)`;
}

function endsInNumber(hostname: string): boolean {
  const labels = hostname.split('.');
  const last = labels.at(-1) === '' ? labels.at(-2) : labels.at(-1);
  return last !== undefined && /^(?:\d+|0x[0-9a-f]*)$/i.test(last);
}

function refused(message: string): MailroomError {
  return new MailroomError('FETCH_REFUSED', message);
}
