import type { DMARCResult } from 'mailauth';
import { type DnsResolver, lookupTxt, mailauthResolver } from './dns-lookup.js';
import { type DomainFinding, type FindingBase, finding, noAnswer } from './domain-finding.js';
import { loadMailauth } from './load-mailauth.js';

/**
 * The finding of the domain's default BIMI record (optional). A record that is there but would not be
 * shown (mailauth's verdict with the domain's DMARC result: BIMI needs p=quarantine or p=reject) is
 * `found` with a `problem` saying why. The logo and certificate are not fetched.
 */
export async function checkBimi(
  resolver: DnsResolver,
  domain: string,
  dmarc: DMARCResult | undefined,
): Promise<DomainFinding> {
  const name = `default._bimi.${domain}`;
  const base: FindingBase = { kind: 'bimi', type: 'TXT', name, optional: true };
  const answer = await lookupTxt(resolver, name);
  if (answer.status === 'no-answer') return noAnswer(base, answer.code);
  const actual = answer.status === 'ok' ? answer.records : [];
  if (!actual.some((text) => /^v=BIMI1\s*(?:;|$)/i.test(text.trim()))) {
    return finding(base, 'missing', actual, `No BIMI record at ${name}`);
  }
  if (dmarc === undefined)
    return finding(base, 'found', actual, 'Not shown: the domain has no working DMARC record');
  const { bimi } = await loadMailauth();
  const tracked = mailauthResolver(resolver);
  const result = await bimi({ dmarc, headers: { parsed: [] }, resolver: tracked.resolve });
  const status = result ? result.status : undefined;
  if (tracked.failures.length > 0) return noAnswer(base, tracked.failures.join(', '), actual);
  if (status?.result === 'pass') return finding(base, 'found', actual);
  if (status?.result === 'temperr') return noAnswer(base, status.comment ?? 'temperror', actual);
  const said = `${status?.result ?? 'no result'}${status?.comment ? ` (${status.comment})` : ''}`;
  return finding(base, status?.result === 'fail' ? 'wrong' : 'found', actual, `Not shown: ${said}`);
}
