import { type DnsResolver, lookupMx } from './dns-lookup.js';
import { type DomainFinding, type FindingBase, finding, noAnswer } from './domain-finding.js';

/**
 * The finding of the return-path domain's MX: bounces reach the inbound server only through it. With
 * `expectedMx` the record must name that host; without, any MX is `found`.
 */
export async function checkReturnPathMx(
  resolver: DnsResolver,
  returnDomain: string,
  expectedMx: string | undefined,
): Promise<DomainFinding> {
  const base: FindingBase = { kind: 'return-path-mx', type: 'MX', name: returnDomain, expected: expectedMx };
  const answer = await lookupMx(resolver, returnDomain);
  if (answer.status === 'no-answer') return noAnswer(base, answer.code);
  const records = answer.status === 'ok' ? answer.records : [];
  const actual = records.map((mx) => `${mx.priority} ${mx.exchange}`);
  if (records.length === 0) {
    return finding(base, 'missing', actual, `No MX at ${returnDomain}: bounces to it cannot be delivered`);
  }
  if (expectedMx !== undefined && !records.some((mx) => mx.exchange === expectedMx)) {
    return finding(
      base,
      'wrong',
      actual,
      `The MX of ${returnDomain} does not name ${expectedMx}, where bounces are read`,
    );
  }
  return finding(base, 'found', actual);
}
