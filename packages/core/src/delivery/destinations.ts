import { domainOf } from '../base/address-parts.js';
import { createDnsResolver, type DnsResolver, lookupMx } from '../domains/dns-lookup.js';

/**
 * The big mailbox providers, by the domains of their addresses: each address of these domains belongs
 * to the group, and shares its limits. A pattern `name.*` matches `name.` followed by any suffix
 * (`hotmail.*`: hotmail.com, hotmail.co.uk, hotmail.fr); any other pattern matches the domain exactly.
 */
export const DEFAULT_DESTINATION_GROUPS: Readonly<Record<string, readonly string[]>> = {
  google: ['gmail.com', 'googlemail.com'],
  microsoft: ['outlook.com', 'hotmail.*', 'live.*', 'msn.com', 'windowslive.com'],
  yahoo: ['yahoo.*', 'aol.com', 'ymail.com', 'rocketmail.com', 'aim.com'],
  apple: ['icloud.com', 'me.com', 'mac.com'],
  proton: ['proton.me', 'protonmail.com', 'protonmail.ch', 'pm.me'],
  gmx: ['gmx.*', 'web.de'],
  yandex: ['yandex.*', 'ya.ru'],
  mailru: ['mail.ru', 'bk.ru', 'inbox.ru', 'list.ru'],
  zoho: ['zoho.com', 'zohomail.com'],
  comcast: ['comcast.net'],
  orange: ['orange.fr', 'wanadoo.fr'],
};

/**
 * The providers' mail exchangers: a domain whose primary MX host is one of these names or under one
 * (`aspmx.l.google.com` is under `google.com`) joins the group, when MX lookups are on (a company on
 * Google Workspace or Microsoft 365 is received, and throttled, by Google or Microsoft).
 */
export const DEFAULT_DESTINATION_MX_HOSTS: Readonly<Record<string, readonly string[]>> = {
  google: ['google.com', 'googlemail.com'],
  microsoft: ['protection.outlook.com'],
  yahoo: ['yahoodns.net'],
  apple: ['mail.icloud.com'],
  proton: ['protonmail.ch'],
  zoho: ['zoho.com', 'zoho.eu'],
  yandex: ['yandex.net', 'yandex.ru'],
};

/** Limits of one destination, shared by every worker on the store. Unset means unlimited. */
export interface DestinationLimits {
  /** Messages per second (see `tokenWindowSpan` for how a window is counted). */
  perSecond?: number;
  /** Messages per minute. */
  perMinute?: number;
  /** Messages per hour. */
  perHour?: number;
  /** Messages per day. */
  perDay?: number;
  /** Sends to the destination at once, per worker process (the connections it opens). */
  concurrency?: number;
}

/** How MX lookups place a domain that no domain pattern names (see {@link DEFAULT_DESTINATION_MX_HOSTS}). */
export interface DestinationMxOptions {
  /** DNS servers to ask (`'127.0.0.1:5353'`). @default the system's servers */
  servers?: string[];
  /** A resolver of your own (it wins over `servers`). */
  resolver?: DnsResolver;
  /** Milliseconds before a lookup is given up: the domain is then its own destination for a minute. @default 2000 */
  timeoutMs?: number;
  /** How long a lookup's answer is kept. @default 3_600_000 (one hour) */
  cacheMs?: number;
  /** MX host names per group, merged over the defaults (a group given replaces its default hosts). */
  hosts?: Record<string, readonly string[]>;
}

/**
 * Destinations (engine option `destinations`): which group each recipient belongs to, and the limits of
 * each group, kept by every worker on the store together.
 *
 * @example
 * destinations: { limits: { google: { perSecond: 20, perDay: 100_000 }, '*': { concurrency: 4 } } }
 */
export interface DestinationOptions {
  /**
   * Groups by domain pattern, merged over {@link DEFAULT_DESTINATION_GROUPS} (a group given replaces its
   * default patterns). A domain in no group is a destination of its own.
   */
  groups?: Record<string, readonly string[]>;
  /** Start from {@link DEFAULT_DESTINATION_GROUPS}. @default true */
  defaultGroups?: boolean;
  /** Place other domains by their MX host too (`true`: the system's resolver). @default false */
  mx?: DestinationMxOptions | boolean;
  /**
   * Limits by destination name (a group, or a domain of its own); `'*'` gives the limits of every
   * destination without its own (each counted apart).
   */
  limits?: Record<string, DestinationLimits>;
  /**
   * After a "slow down" answer from a destination (421, 450, 454 or a 4.7.x status), its sends pause this
   * long and its limits and concurrency in this worker are halved; each pause in a row doubles, up to a
   * minute, and each run of successes raises them again. @default 5000
   */
  slowDownPauseMs?: number;
}

/** Maps a recipient address to its destination's name. */
export interface DestinationResolver {
  /** The destination of `address` (by its domain): a group's name, or the domain itself. */
  resolve(address: string): Promise<string>;
}

/** Answers kept at most, from MX lookups (the oldest goes first). */
const MAX_CACHED = 10_000;
/** How long a lookup without an answer is kept: the domain is its own destination meanwhile. */
const NO_ANSWER_MS = 60_000;

/** A resolver of destinations: domain patterns first, then (when on) the primary MX host, else the domain. */
export function createDestinationResolver(
  options: DestinationOptions = {},
  now: () => number = Date.now,
): DestinationResolver {
  const groups = {
    ...(options.defaultGroups === false ? {} : DEFAULT_DESTINATION_GROUPS),
    ...options.groups,
  };
  const exact = new Map<string, string>();
  const prefixes: Array<[string, string]> = [];
  for (const [name, patterns] of Object.entries(groups)) {
    for (const pattern of patterns) {
      const p = pattern.toLowerCase();
      if (p.endsWith('.*')) prefixes.push([p.slice(0, -1), name]);
      else exact.set(p, name);
    }
  }
  const byPattern = (domain: string): string | undefined =>
    exact.get(domain) ?? prefixes.find(([prefix]) => domain.startsWith(prefix))?.[1];

  const mx = options.mx === true ? {} : options.mx || undefined;
  if (!mx) {
    return { resolve: async (address) => byPattern(domainOf(address)) ?? domainOf(address) };
  }
  const timeoutMs = mx.timeoutMs ?? 2000;
  const cacheMs = mx.cacheMs ?? 3_600_000;
  const resolver =
    mx.resolver ?? createDnsResolver({ ...(mx.servers ? { servers: mx.servers } : {}), timeoutMs, tries: 1 });
  const hosts = Object.entries({ ...DEFAULT_DESTINATION_MX_HOSTS, ...mx.hosts });
  const cache = new Map<string, { name: string; until: number }>();
  const pending = new Map<string, Promise<string>>();

  const byMx = async (domain: string): Promise<string> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const found = await Promise.race([lookupMx(resolver, domain), timeout]).finally(() =>
      clearTimeout(timer),
    );
    let name = domain;
    let keep = cacheMs;
    if (found === 'timeout' || found.status === 'no-answer') keep = Math.min(cacheMs, NO_ANSWER_MS);
    else if (found.status === 'ok') {
      const primary = [...found.records].sort((a, b) => a.priority - b.priority)[0]?.exchange ?? '';
      name =
        hosts.find(([, suffixes]) => suffixes.some((s) => primary === s || primary.endsWith(`.${s}`)))?.[0] ??
        domain;
    }
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
    cache.set(domain, { name, until: now() + keep });
    return name;
  };

  return {
    async resolve(address) {
      const domain = domainOf(address);
      const named = byPattern(domain);
      if (named) return named;
      const cached = cache.get(domain);
      if (cached && cached.until > now()) return cached.name;
      let lookup = pending.get(domain);
      if (!lookup) {
        // Concurrent deliveries to one domain share one lookup.
        lookup = byMx(domain).finally(() => pending.delete(domain));
        pending.set(domain, lookup);
      }
      return lookup;
    },
  };
}

/** The domain of an address, lower-cased (the core normalizes only the domain). */
