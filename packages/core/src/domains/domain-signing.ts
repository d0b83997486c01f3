import { MailroomError } from '../base/errors.js';
import type { BaseContext } from '../context/base-context.js';
import type { DkimKey } from '../mime/dkim-signer.js';
import type { DomainRecord, DomainStore } from '../store/domain-store.js';
import type { DomainFinding } from './domain-finding.js';
import { normalizeDomain } from './domain-name.js';
import { signingKeyOf } from './domain-view.js';
import type { DomainWarning, SendingPolicy } from './domains-options.js';
import { openKey } from './sealed-key.js';

/** How long a process trusts its copy of a domain: a key activated by another process is used after it. */
export const DOMAIN_CACHE_MS = 30_000;
/** Cached domains (and warned domains per project) kept at most; the oldest go first. */
const MAX_CACHED = 4096;

/**
 * The domains as sending reads them: the key a message from a domain is signed with, and the sending
 * policy's verdict on a sender. Reads go through a short cache (see {@link DOMAIN_CACHE_MS}); the engine's
 * own changes forget the cached copy at once. Internal.
 */
export interface DomainSigning {
  /**
   * The key that signs mail from `domain` (the From address's domain) in the project: its newest `active`
   * key, opened; undefined when the domain is not the project's or no key of it was seen in DNS yet.
   */
  signingKey(projectId: string, domain: string): Promise<DkimKey | undefined>;
  /**
   * Applies the sending policy to a sender address: nothing when its domain is verified; otherwise, under
   * `enforce`, throws `DOMAIN_NOT_VERIFIED` naming the missing or wrong record, and under `warn` logs a
   * warning once per project and domain. With `store` (the roles bound to the app's transaction) the
   * domain is read through it, not through the cache.
   */
  admit(projectId: string, senderAddress: string, store?: Pick<DomainStore, 'getDomain'>): Promise<void>;
  /** The unverified domains this process sent from under `warn`, first seen first. */
  warnings(projectId: string): DomainWarning[];
  /** Forget the cached copy of a domain (after a change made through this engine). */
  forget(projectId: string, domain: string): void;
}

/** The signing side of the domains, over the store and the sealing secret. */
export function createDomainSigning(
  ctx: BaseContext,
  settings: { policy: SendingPolicy; secret: () => Promise<string> },
): DomainSigning {
  const cache = new Map<string, { until: number; record: Promise<DomainRecord | undefined> }>();
  const opened = new Map<string, string>();
  const warned = new Map<string, Map<string, DomainWarning>>();

  function read(projectId: string, domain: string): Promise<DomainRecord | undefined> {
    const cacheKey = `${projectId}\n${domain}`;
    const now = Date.now();
    const hit = cache.get(cacheKey);
    if (hit && hit.until > now) return hit.record;
    const record = ctx.store.getDomain(projectId, domain);
    // A failed read is not kept: the next send reads again.
    record.catch(() => cache.delete(cacheKey));
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
    cache.set(cacheKey, { until: now + DOMAIN_CACHE_MS, record });
    return record;
  }

  async function privateKeyOf(record: DomainRecord, selector: string, sealed: string): Promise<string> {
    const label = `${record.domain}/${selector}`;
    const cacheKey = `${record.id}\n${label}`;
    let pem = opened.get(cacheKey);
    if (pem === undefined) {
      pem = openKey(sealed, await settings.secret(), label);
      if (opened.size >= MAX_CACHED) opened.delete(opened.keys().next().value as string);
      opened.set(cacheKey, pem);
    }
    return pem;
  }

  function warnOnce(projectId: string, domain: string, problem: string): void {
    let seen = warned.get(projectId);
    if (!seen) {
      if (warned.size >= MAX_CACHED) warned.delete(warned.keys().next().value as string);
      seen = new Map();
      warned.set(projectId, seen);
    }
    if (seen.has(domain) || seen.size >= MAX_CACHED) return;
    seen.set(domain, { domain, problem, firstAt: ctx.clock.now() });
    ctx.logger.warn({ projectId, domain, problem }, 'mail sent from a domain that is not verified');
  }

  return {
    async signingKey(projectId, domain) {
      const name = senderDomain(`@${domain}`);
      const record = name === undefined ? undefined : await read(projectId, name);
      const key = record && signingKeyOf(record.keys);
      if (!record || !key?.sealedPrivateKey) return undefined;
      const privateKey = await privateKeyOf(record, key.selector, key.sealedPrivateKey);
      return { selector: key.selector, privateKey, domain: record.domain };
    },

    async admit(projectId, senderAddress, store) {
      const domain = senderDomain(senderAddress);
      const record =
        domain === undefined
          ? undefined
          : store
            ? await store.getDomain(projectId, domain)
            : await read(projectId, domain);
      if (record?.state === 'verified') return;
      const problem = unverified(domain ?? senderAddress, record);
      if (settings.policy === 'enforce') throw new MailroomError('DOMAIN_NOT_VERIFIED', problem);
      warnOnce(projectId, domain ?? senderAddress, problem);
    },

    warnings(projectId) {
      return [...(warned.get(projectId)?.values() ?? [])].map((warning) => ({ ...warning }));
    },

    forget(projectId, domain) {
      cache.delete(`${projectId}\n${domain}`);
    },
  };
}

/** The normalised domain of an address, or undefined when it is not a domain a project can add. */
function senderDomain(address: string): string | undefined {
  try {
    return normalizeDomain(address.slice(address.lastIndexOf('@') + 1));
  } catch {
    return undefined;
  }
}

/** Why mail from `domain` is not verified, naming the first record missing or wrong. */
export function unverified(domain: string, record: DomainRecord | undefined): string {
  const local = localOnly(domain);
  if (local) {
    // No record can be published for it: advising to publish and verify would send the reader nowhere.
    return `${domain} is a local-only name (${local}): it cannot be published in DNS, so it is never verified. Fine for trying Mailroom out (the outbox, a test relay); for real inboxes, send from a domain you own: add it (POST /domains or mailroom domain add DOMAIN), publish its records and verify it`;
  }
  if (!record) {
    return `${domain} is not a domain of this project: add it (POST /domains or mailroom domain add ${domain}), publish its records and verify it`;
  }
  const required = (record.findings ?? []).filter((found) => !found.optional);
  const broken = required.find((found) => found.state === 'missing' || found.state === 'wrong');
  if (broken) return `${domain} is not verified: ${describe(broken)}`;
  const silent = required.find((found) => found.state === 'no-answer');
  if (silent)
    return `${domain} is not verified: DNS did not answer for the ${silent.type} record at ${silent.name}`;
  return `${domain} is not verified yet: publish its records (GET /domains/${domain}) and verify it (POST /domains/${domain}/verify)`;
}

/**
 * Special-use names that can never be published in the global DNS (RFC 6761, 6762, 8375, 9476; ICANN's
 * `.internal`), with why, so that the demo's `mailroom.local` is not told to publish its records.
 */
const LOCAL_ONLY: ReadonlyArray<[suffix: string, why: string]> = [
  ['local', '.local is for multicast DNS on a local network, RFC 6762'],
  ['localhost', '.localhost is this machine, RFC 6761'],
  ['invalid', '.invalid is never a real name, RFC 6761'],
  ['internal', '.internal is for private networks'],
  ['home.arpa', 'home.arpa is for home networks, RFC 8375'],
  ['alt', '.alt is outside the DNS, RFC 9476'],
];

/** Why `domain` can never be published in DNS, or undefined when it can. */
function localOnly(domain: string): string | undefined {
  const name = domain.toLowerCase().replace(/\.$/, '');
  return LOCAL_ONLY.find(([suffix]) => name === suffix || name.endsWith(`.${suffix}`))?.[1];
}

function describe(found: DomainFinding): string {
  const what = `the ${found.kind.toUpperCase()} record (${found.type} at ${found.name})`;
  const problem = found.problem ?? (found.state === 'missing' ? 'it is not published' : 'it is wrong');
  return `${what} is ${found.state}: ${problem}`;
}
