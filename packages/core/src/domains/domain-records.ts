import { isIP } from 'node:net';
import { MailroomError } from '../base/errors.js';
import type { DkimAlgorithm, DomainRecordKind } from '../store/domain-types.js';
import { isWithinDomain, normalizeDomain } from './domain-name.js';

export type { DomainRecordKind } from '../store/domain-types.js';

/** One record the domain's owner publishes. */
export interface DnsRecordToPublish {
  /** What it is for. */
  readonly kind: DomainRecordKind;
  /** The record type. */
  readonly type: 'TXT' | 'MX';
  /** The full name, without a trailing dot (a zone file wants one added; most DNS panels do not). */
  readonly name: string;
  /**
   * The value, exactly: TXT text without quotes (a DNS panel splits a long one into strings of up to 255
   * characters itself, a zone file needs `"..." "..."`), or the MX exchange host.
   */
  readonly value: string;
  /** MX preference. */
  readonly priority?: number;
  /** Why or how, when the value is advice rather than the only right one. */
  readonly note?: string;
}

/** A DKIM key to publish. */
export interface DkimPublication {
  /** The selector, for example `mr20260829`. */
  readonly selector: string;
  /** `rsa` or `ed25519`. */
  readonly algorithm: DkimAlgorithm;
  /** The `p=` value (see `DkimKeyPair.publicKey`). */
  readonly publicKey: string;
}

/**
 * How the relay that carries the domain's mail is named in SPF. Without it the records advise
 * `v=spf1 a mx ~all` (the domain's own web and mail hosts), and a check can only see that a record is there.
 */
export interface SpfRelay {
  /**
   * Mechanisms that authorise the relay, as its provider documents them.
   * @example ['include:amazonses.com']
   */
  readonly mechanisms?: readonly string[];
  /**
   * Addresses mail leaves the relay from. A check evaluates SPF for each; when `mechanisms` is not given
   * they are also what is published (`ip4:` / `ip6:`).
   */
  readonly addresses?: readonly string[];
}

/** The VERP return path of the domain's mail, when bounces are on. */
export interface ReturnPathPlan {
  /** The return-path domain, for example `bounces.acme.com` (best under the From domain: SPF then aligns). */
  readonly domain: string;
  /** The host that receives the bounces (the inbound SMTP server); its MX record is listed when given. */
  readonly mx?: string;
}

/** What {@link domainRecords} plans from. */
export interface DomainRecordsInput {
  /** The sending domain, normalised. */
  readonly domain: string;
  /** Its DKIM keys: usually one, two during a rotation or when signing with RSA and Ed25519. */
  readonly dkim: readonly DkimPublication[];
  /** The relay, when known. */
  readonly relay?: SpfRelay;
  /** The return path, when bounces are on. */
  readonly returnPath?: ReturnPathPlan;
  /**
   * The address DMARC aggregate reports go to (`rua`).
   * @default `dmarc@<domain>`
   */
  readonly dmarcReports?: string;
}

/** The advice when the relay is not known: the domain's web (A) and mail (MX) hosts may send. */
export const DEFAULT_SPF_MECHANISMS: readonly string[] = ['a', 'mx'];

const MECHANISM =
  /^[+?~-]?(?:(?:a|mx)(?::[^\s:/]+)?(?:\/\d{1,3}){0,2}|ip4:[0-9.]+(?:\/\d{1,2})?|ip6:[0-9a-f:.]+(?:\/\d{1,3})?|include:[^\s]+|exists:[^\s]+)$/i;

/**
 * Every record the domain needs, in the order to publish them: DKIM, SPF, DMARC (and its report
 * authorisation when reports go to another domain), then the return path's MX and SPF.
 * @throws MailroomError `VALIDATION_FAILED` on a malformed relay mechanism or address, or return-path domain.
 */
export function domainRecords(input: DomainRecordsInput): DnsRecordToPublish[] {
  const { domain } = input;
  const records: DnsRecordToPublish[] = input.dkim.map((key) => dkimRecord(domain, key));
  const mechanisms = spfMechanisms(input.relay);
  const note = input.relay ? undefined : SPF_ADVICE;
  records.push({
    kind: 'spf',
    type: 'TXT',
    name: domain,
    value: spfValue(mechanisms),
    ...(note ? { note } : {}),
  });
  const reports = input.dmarcReports ?? `dmarc@${domain}`;
  records.push({
    kind: 'dmarc',
    type: 'TXT',
    name: `_dmarc.${domain}`,
    value: dmarcValue(reports),
    note: 'p=none only reports: move to p=quarantine, then p=reject, once the reports show all your mail passes.',
  });
  const reportDomain = reportDomainOf(reports);
  if (!isWithinDomain(reportDomain, domain)) {
    records.push({
      kind: 'dmarc-report-auth',
      type: 'TXT',
      name: `${domain}._report._dmarc.${reportDomain}`,
      value: 'v=DMARC1',
      note: `Published in ${reportDomain}'s zone: without it, receivers do not send ${domain}'s reports there.`,
    });
  }
  if (input.returnPath) {
    const returnDomain = normalizeDomain(input.returnPath.domain);
    if (input.returnPath.mx !== undefined) {
      records.push({
        kind: 'return-path-mx',
        type: 'MX',
        name: returnDomain,
        value: normalizeDomain(input.returnPath.mx),
        priority: 10,
      });
    }
    records.push({
      kind: 'return-path-spf',
      type: 'TXT',
      name: returnDomain,
      value: spfValue(mechanisms),
      ...(note ? { note } : {}),
    });
  }
  return records;
}

/** The DKIM TXT record of a key: `v=DKIM1; k=rsa; p=...` (RFC 6376 3.6.1; `k=ed25519`, RFC 8463). */
export function dkimRecord(domain: string, key: DkimPublication): DnsRecordToPublish {
  return {
    kind: 'dkim',
    type: 'TXT',
    name: `${key.selector}._domainkey.${domain}`,
    value: dkimValue(key.algorithm, key.publicKey),
  };
}

/** The text of a DKIM key record. */
export function dkimValue(algorithm: DkimAlgorithm, publicKey: string): string {
  return `v=DKIM1; k=${algorithm}; p=${publicKey}`;
}

/**
 * The normalised domain of a DMARC reporting address.
 * @throws MailroomError `VALIDATION_FAILED` (path `['dmarcReports']`) unless it is `local@domain`.
 */
export function reportDomainOf(reports: string): string {
  const at = reports.lastIndexOf('@');
  if (at <= 0 || /[\s;,!]/.test(reports)) {
    const message = `The DMARC reporting address ${JSON.stringify(reports)} is not an address`;
    throw new MailroomError('VALIDATION_FAILED', message, {
      issues: [{ code: 'custom', path: ['dmarcReports'], message }],
    });
  }
  return normalizeDomain(reports.slice(at + 1));
}

/** The text of a starting DMARC record: report only, aggregate reports to `reports`. */
export function dmarcValue(reports: string): string {
  return `v=DMARC1; p=none; rua=mailto:${reports}`;
}

/**
 * The mechanisms that name the relay: `relay.mechanisms`, else `ip4:`/`ip6:` of its addresses, else
 * {@link DEFAULT_SPF_MECHANISMS}.
 * @throws MailroomError `VALIDATION_FAILED` on a malformed mechanism or address.
 */
export function spfMechanisms(relay: SpfRelay | undefined): string[] {
  for (const address of relay?.addresses ?? []) {
    if (isIP(address) === 0)
      throw invalidRelay(['relay', 'addresses'], `${JSON.stringify(address)} is not an IP address`);
  }
  if (relay?.mechanisms?.length) {
    for (const mechanism of relay.mechanisms) {
      if (!MECHANISM.test(mechanism)) {
        throw invalidRelay(
          ['relay', 'mechanisms'],
          `${JSON.stringify(mechanism)} is not an SPF mechanism this check accepts`,
        );
      }
    }
    return [...relay.mechanisms];
  }
  if (relay?.addresses?.length) return relay.addresses.map((ip) => `${isIP(ip) === 6 ? 'ip6' : 'ip4'}:${ip}`);
  return [...DEFAULT_SPF_MECHANISMS];
}

/** A new SPF record: the mechanisms, then `~all`. */
export function spfValue(mechanisms: readonly string[]): string {
  // ~all (softfail) rather than -all: a relay missing from the record costs a spam-folder placement, not a
  // bounce, while DMARC (once beyond p=none) is where the domain's owner chooses to refuse.
  return ['v=spf1', ...mechanisms, '~all'].join(' ');
}

/**
 * An existing SPF record with the missing `mechanisms` added before its `all` (or `redirect=`): a domain
 * has exactly one SPF record (RFC 7208 3.2), so the advice is to edit it, never to publish a second.
 */
export function mergeSpf(existing: string, mechanisms: readonly string[]): string {
  const terms = existing.trim().split(/\s+/);
  const present = new Set(terms.map((term) => term.toLowerCase().replace(/^\+/, '')));
  const missing = mechanisms.filter((mechanism) => !present.has(mechanism.toLowerCase().replace(/^\+/, '')));
  if (missing.length === 0) return terms.join(' ');
  let at = terms.findIndex((term) => /^[+?~-]?all$/i.test(term) || /^redirect=/i.test(term));
  if (at < 0) at = terms.length;
  return [...terms.slice(0, at), ...missing, ...terms.slice(at)].join(' ');
}

const SPF_ADVICE =
  "The relay is not known: this lets the domain's web (A) and mail (MX) hosts send. Add your relay's mechanism (an include: or ip4:) if it sends from elsewhere.";

function invalidRelay(path: string[], message: string): MailroomError {
  return new MailroomError('VALIDATION_FAILED', `SPF relay: ${message}`, {
    issues: [{ code: 'custom', path, message }],
  });
}
