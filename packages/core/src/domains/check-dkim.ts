import { randomUUID } from 'node:crypto';
import type { DkimAlgorithm } from './dkim-key.js';
import { type DnsResolver, lookupTxt, mailauthResolver } from './dns-lookup.js';
import { type DomainFinding, type FindingBase, finding, noAnswer } from './domain-finding.js';
import { dkimValue } from './domain-records.js';
import { loadMailauth } from './load-mailauth.js';

/** The DKIM key a check looks for. The more of it is given, the more the check proves. */
export interface DkimExpectation {
  /** The selector. */
  readonly selector: string;
  /**
   * `rsa` or `ed25519`: the record's `k=` must say it.
   * @default 'rsa' (when `publicKey` is given)
   */
  readonly algorithm?: DkimAlgorithm;
  /** The `p=` value: the published key must be this one. Without it any usable key is `found`. */
  readonly publicKey?: string;
  /**
   * The private key in PEM. When given, a probe message signed with it must verify against DNS with
   * `mailauth` (what a receiver does), which also catches records a receiver reads otherwise.
   */
  readonly privateKey?: string;
}

/** The finding of one DKIM key record. */
export async function checkDkim(
  resolver: DnsResolver,
  domain: string,
  key: DkimExpectation,
): Promise<DomainFinding> {
  const name = `${key.selector}._domainkey.${domain}`;
  const algorithm = key.algorithm ?? 'rsa';
  const base: FindingBase = {
    kind: 'dkim',
    type: 'TXT',
    name,
    expected: key.publicKey === undefined ? undefined : dkimValue(algorithm, key.publicKey),
  };
  const answer = await lookupTxt(resolver, name);
  if (answer.status === 'no-answer') return noAnswer(base, answer.code);
  const actual = answer.status === 'ok' ? answer.records : [];
  const keys = actual
    .map(parseTags)
    .filter((tags) => tags !== undefined && ('p' in tags || tags.v === 'DKIM1'));
  const [tags] = keys;
  if (!tags) return finding(base, 'missing', actual, `No DKIM key is published at ${name}`);
  if (keys.length > 1) {
    return finding(
      base,
      'wrong',
      actual,
      `${keys.length} DKIM records at ${name}: receivers may read either; keep one`,
    );
  }
  if (tags.v !== undefined && tags.v !== 'DKIM1') {
    return finding(base, 'wrong', actual, `The record at ${name} says v=${tags.v}, not v=DKIM1`);
  }
  const published = (tags.p ?? '').replace(/\s+/g, '');
  if (published === '') return finding(base, 'wrong', actual, `The key at ${name} is revoked (empty p=)`);
  const type = (tags.k ?? 'rsa').toLowerCase();
  if (key.algorithm !== undefined || key.publicKey !== undefined) {
    if (type !== algorithm) {
      return finding(
        base,
        'wrong',
        actual,
        `The record at ${name} says k=${type}, but the key is ${algorithm}`,
      );
    }
  }
  if (key.publicKey !== undefined && published !== key.publicKey) {
    return finding(base, 'wrong', actual, `The key published at ${name} is another key than the domain's`);
  }
  if (key.privateKey === undefined) return finding(base, 'found', actual);
  return probe(resolver, domain, key.selector, key.privateKey, base, actual);
}

/** Signs a small message with the private key and verifies it against DNS, as a receiver would. */
async function probe(
  resolver: DnsResolver,
  domain: string,
  selector: string,
  privateKey: string,
  base: FindingBase,
  actual: readonly string[],
): Promise<DomainFinding> {
  const { dkimSign, dkimVerify } = await loadMailauth();
  const message = [
    `From: <postmaster@${domain}>`,
    `To: <postmaster@${domain}>`,
    'Subject: Mailroom DKIM check',
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <${randomUUID()}@${domain}>`,
    '',
    'This message is signed and verified in memory only; it is never sent.',
    '',
  ].join('\r\n');
  // mailauth 4 signs with `signatureData` only (its types also ask for the same fields at the top level,
  // which it ignores); the algorithm follows the key. One `signTime`: without it mailauth reads the clock
  // for the header it signs and again for the header it writes, and a probe that straddles a half second
  // (a loaded machine) carries another `t=` than it signed: "bad signature" for a good key.
  const signing = { signingDomain: domain, selector, privateKey };
  const signed = await dkimSign(message, { ...signing, signTime: new Date(), signatureData: [signing] });
  if (signed.errors.length > 0 || signed.signatures.trim() === '') {
    const reason = signed.errors[0]?.message ?? 'no signature made';
    return finding(base, 'wrong', actual, `The domain's private key cannot sign (${reason})`);
  }
  const tracked = mailauthResolver(resolver);
  const verified = await dkimVerify(signed.signatures + message, { resolver: tracked.resolve });
  const status = verified.results[0]?.status;
  if (tracked.failures.length > 0) return noAnswer(base, tracked.failures.join(', '), actual);
  const said = `${status?.result ?? 'no result'}${status?.comment ? ` (${status.comment})` : ''}`;
  switch (status?.result) {
    case 'pass':
      return finding(base, 'found', actual);
    case 'temperror':
      return noAnswer(base, status.comment ?? 'temperror', actual);
    default:
      if (status?.comment === 'no key')
        return finding(base, 'missing', actual, `No DKIM key is published at ${base.name}`);
      return finding(
        base,
        'wrong',
        actual,
        `A message signed with the domain's key does not verify: ${said}`,
      );
  }
}

/** A tag list (RFC 6376 3.2): `v=DKIM1; k=rsa; p=...`; undefined when it is not one. */
function parseTags(text: string): Record<string, string> | undefined {
  const tags: Record<string, string> = {};
  for (const part of text.split(';')) {
    const spec = part.trim();
    if (spec === '') continue;
    const eq = spec.indexOf('=');
    if (eq <= 0) return undefined;
    tags[spec.slice(0, eq).trim().toLowerCase()] = spec.slice(eq + 1).trim();
  }
  return tags;
}
