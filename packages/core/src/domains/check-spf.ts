import { type DnsResolver, lookupTxt, mailauthResolver } from './dns-lookup.js';
import { type DomainFinding, type FindingBase, finding, noAnswer } from './domain-finding.js';
import { mergeSpf, type SpfRelay, spfMechanisms, spfValue } from './domain-records.js';
import { loadMailauth } from './load-mailauth.js';

/**
 * An address from TEST-NET-1 (RFC 5737), which no relay sends from: evaluating SPF for it finds the
 * errors of a record (permerror, too many lookups) without a relay address, and a pass means the record
 * lets anyone send (`+all`).
 */
const PROBE_ADDRESS = '192.0.2.1';

/** The finding of the SPF record at `domain` (the From domain, or the return-path domain). */
export async function checkSpf(
  resolver: DnsResolver,
  kind: 'spf' | 'return-path-spf',
  domain: string,
  relay: SpfRelay | undefined,
): Promise<DomainFinding> {
  const mechanisms = spfMechanisms(relay);
  const base: FindingBase = { kind, type: 'TXT', name: domain, expected: spfValue(mechanisms) };
  const answer = await lookupTxt(resolver, domain);
  if (answer.status === 'no-answer') return noAnswer(base, answer.code);
  const actual = answer.status === 'ok' ? answer.records : [];
  const records = actual.filter((text) => /^v=spf1(?:\s|$)/i.test(text.trim()));
  const [record] = records;
  if (record === undefined) return finding(base, 'missing', actual, `No SPF record at ${domain}`);
  // With the relay unknown there is nothing to add: the advice `a mx` is for a domain without a record.
  const merged: FindingBase = { ...base, expected: relay ? mergeSpf(record, mechanisms) : undefined };
  if (records.length > 1) {
    const problem = `${records.length} SPF records at ${domain}: receivers fail them all (permerror); merge them into one`;
    return finding(merged, 'wrong', actual, problem);
  }
  const addresses = relay?.addresses ?? [];
  // The probe address too: it walks the whole record, where a relay address may stop at its own mechanism.
  for (const address of [...addresses, PROBE_ADDRESS]) {
    const status = await evaluate(resolver, domain, address);
    const said = `${status.result}${status.comment ? ` (${status.comment})` : ''}`;
    if (status.result === 'temperror' || status.failures.length > 0) {
      return noAnswer(merged, status.failures.join(', ') || status.comment || 'temperror', actual);
    }
    if (status.result === 'permerror') {
      return finding(merged, 'wrong', actual, `The SPF record at ${domain} has an error: ${said}`);
    }
    if (address !== PROBE_ADDRESS && status.result !== 'pass') {
      const fix =
        merged.expected === record
          ? 'the mechanisms it names do not cover it'
          : 'add the relay to the record';
      return finding(
        merged,
        'wrong',
        actual,
        `SPF at ${domain} gives ${address} "${said}", not pass: ${fix}`,
      );
    }
    if (address === PROBE_ADDRESS && status.result === 'pass' && !addresses.includes(PROBE_ADDRESS)) {
      return finding(
        merged,
        'wrong',
        actual,
        `The SPF record at ${domain} lets any address send (it passes ${address})`,
      );
    }
  }
  // Without addresses a pass cannot be shown: the record must at least name the relay's mechanisms.
  if (addresses.length === 0 && relay?.mechanisms?.length && merged.expected !== record) {
    return finding(merged, 'wrong', actual, `The SPF record at ${domain} does not name the relay`);
  }
  return finding({ ...merged, expected: merged.expected ?? record }, 'found', actual);
}

async function evaluate(
  resolver: DnsResolver,
  domain: string,
  ip: string,
): Promise<{ result: string; comment?: string; failures: string[] }> {
  const { spf } = await loadMailauth();
  const tracked = mailauthResolver(resolver);
  const result = await spf({
    sender: `postmaster@${domain}`,
    ip,
    helo: domain,
    mta: 'mailroom',
    resolver: tracked.resolve,
  });
  return { ...result.status, failures: tracked.failures };
}
