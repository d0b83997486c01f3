import { Resolver } from 'node:dns/promises';

/**
 * The part of a `node:dns/promises` `Resolver` the domain checks call: inject one pointed at any server
 * (`resolver.setServers(['127.0.0.1:5353'])`) or make one with {@link createDnsResolver}. Errors must carry
 * node's DNS codes: `ENOTFOUND` (no such name) and `ENODATA` (no record of that type) mean "not there";
 * any other code means the server gave no usable answer.
 */
export interface DnsResolver {
  /** Records of `rrtype` at `hostname`: `TXT` answers `string[][]`, `MX` `{ exchange, priority }[]`. */
  resolve(hostname: string, rrtype: string): Promise<unknown>;
}

/** Options of {@link createDnsResolver}. */
export interface DnsResolverOptions {
  /**
   * Servers to ask (`'127.0.0.1:5353'`, `'[::1]:53'`).
   * @default the system's servers
   */
  servers?: string[];
  /**
   * Milliseconds before one query is given up (then tried again, `tries` times in all).
   * @default 2000
   */
  timeoutMs?: number;
  /**
   * Attempts per query and server.
   * @default 2
   */
  tries?: number;
}

/** A `node:dns/promises` resolver with a bounded wait, so a silent server ends a check in seconds. */
export function createDnsResolver(options: DnsResolverOptions = {}): DnsResolver {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 2000, tries: options.tries ?? 2 });
  if (options.servers) resolver.setServers(options.servers);
  return resolver;
}

/** What one lookup found. */
export type Lookup<T> =
  /** The name has records of the type. */
  | { readonly status: 'ok'; readonly records: T[] }
  /** The name does not exist, or has no record of the type. */
  | { readonly status: 'none' }
  /** The server did not answer, or failed (timeout, SERVFAIL, refused): nothing can be concluded. */
  | { readonly status: 'no-answer'; readonly code: string };

/** TXT records at `name`, each record's strings joined (RFC 7208 3.3, RFC 6376 3.6.2.2). */
export async function lookupTxt(resolver: DnsResolver, name: string): Promise<Lookup<string>> {
  const found = await lookup(resolver, name, 'TXT');
  if (found.status !== 'ok') return found;
  return { status: 'ok', records: (found.records as string[][]).map((strings) => strings.join('')) };
}

/** MX records at `name`, exchanges lower-cased without a trailing dot. */
export async function lookupMx(
  resolver: DnsResolver,
  name: string,
): Promise<Lookup<{ exchange: string; priority: number }>> {
  const found = await lookup(resolver, name, 'MX');
  if (found.status !== 'ok') return found;
  return {
    status: 'ok',
    records: (found.records as Array<{ exchange: string; priority: number }>).map((mx) => ({
      exchange: mx.exchange.toLowerCase().replace(/\.$/, ''),
      priority: mx.priority,
    })),
  };
}

/** A resolver function as `mailauth` takes it (`(name, rrtype) => records`). */
export type MailauthResolver = (name: string, rrtype: string) => Promise<string[][]>;

/**
 * The resolver function `mailauth` takes, errors passed through unchanged, and the lookups that got no
 * answer. mailauth skips an SPF `include` whose server fails with SERVFAIL and may still say `pass` from a
 * later mechanism, where a receiver would defer (RFC 7208 5.2): a check reads `failures` to say "no answer".
 */
export function mailauthResolver(resolver: DnsResolver): { resolve: MailauthResolver; failures: string[] } {
  const failures: string[] = [];
  return {
    failures,
    // mailauth reads the records in node's shapes and the error codes node gives: both pass as they are.
    resolve: async (name, rrtype) => {
      try {
        return (await resolver.resolve(name, rrtype)) as string[][];
      } catch (error) {
        if (!isNoRecord(error)) failures.push(`${name} ${rrtype}: ${codeOf(error) ?? 'EUNKNOWN'}`);
        throw error;
      }
    },
  };
}

/** Whether a DNS error means "no such record" rather than "no answer". */
export function isNoRecord(error: unknown): boolean {
  const code = codeOf(error);
  return code === 'ENOTFOUND' || code === 'ENODATA';
}

async function lookup(resolver: DnsResolver, name: string, rrtype: string): Promise<Lookup<unknown>> {
  try {
    const records = (await resolver.resolve(name, rrtype)) as unknown[];
    return records.length === 0 ? { status: 'none' } : { status: 'ok', records };
  } catch (error) {
    if (isNoRecord(error)) return { status: 'none' };
    return { status: 'no-answer', code: codeOf(error) ?? 'EUNKNOWN' };
  }
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
