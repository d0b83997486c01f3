import type { DMARCResult } from 'mailauth';
import { type DnsResolver, lookupTxt, mailauthResolver } from './dns-lookup.js';
import { type DomainFinding, type FindingBase, finding, noAnswer } from './domain-finding.js';
import { dmarcValue } from './domain-records.js';
import { loadMailauth } from './load-mailauth.js';

/** How the domain's mail authenticates, from the other findings: what DMARC is evaluated with. */
export interface DmarcInputs {
  /** The envelope (return-path) domain, when its SPF record passes for the relay. */
  readonly spfDomain?: string;
  /** The envelope domain, whether or not SPF passes (to explain a failure). */
  readonly envelopeDomain: string;
  /** Whether a DKIM key of the domain is found (its signatures have `d=` the From domain). */
  readonly dkimPasses: boolean;
  /** The reporting address of the record to advise. */
  readonly reports: string;
}

/**
 * The finding of the DMARC record of `domain` (as the From domain), with mailauth's evaluation of a
 * message that authenticates as `inputs` says: found when such mail passes DMARC.
 */
export async function checkDmarc(
  resolver: DnsResolver,
  domain: string,
  inputs: DmarcInputs,
): Promise<{ finding: DomainFinding; result?: DMARCResult }> {
  const name = `_dmarc.${domain}`;
  const base: FindingBase = { kind: 'dmarc', type: 'TXT', name, expected: dmarcValue(inputs.reports) };
  const answer = await lookupTxt(resolver, name);
  if (answer.status === 'no-answer') return { finding: noAnswer(base, answer.code) };
  const actual = answer.status === 'ok' ? answer.records : [];
  const records = actual.filter((text) => /^v=DMARC1\s*(?:;|$)/i.test(text.trim()));
  if (records.length > 1) {
    const problem = `${records.length} DMARC records at ${name}: receivers ignore them all; keep one`;
    return { finding: finding(base, 'wrong', actual, problem) };
  }

  const { dmarc } = await loadMailauth();
  const tracked = mailauthResolver(resolver);
  const result = await dmarc({
    headerFrom: domain,
    spfDomains: inputs.spfDomain === undefined ? [] : [inputs.spfDomain],
    dkimDomains: inputs.dkimPasses ? [{ domain, aligned: true }] : [],
    resolver: tracked.resolve,
  });
  if (tracked.failures.length > 0) return { finding: noAnswer(base, tracked.failures.join(', '), actual) };
  if (result === false) return { finding: finding(base, 'missing', actual, `No DMARC record at ${name}`) };
  const status = result.status.result;
  if (status === 'temperror') return { finding: noAnswer(base, result.error ?? 'temperror', actual) };
  if (status === 'none' || result.rr === undefined) {
    return { finding: finding(base, 'missing', actual, `No DMARC record at ${name}`), result };
  }
  // mailauth also finds the organisational domain's record (RFC 7489 6.6.3): report the one it used.
  const used = actual.length > 0 ? actual : [result.rr];
  const tags = parseTags(result.rr);
  if (!['none', 'quarantine', 'reject'].includes((tags.p ?? '').toLowerCase())) {
    const problem = `The DMARC record ${result.rr === records[0] ? `at ${name}` : 'of the organisational domain'} has no valid p= policy (none, quarantine or reject)`;
    return { finding: finding(base, 'wrong', used, problem), result };
  }
  // mailauth 4 matches organisational domains even under adkim=s / aspf=s: strict modes are applied here.
  const spfAligned = aligned(result.alignment.spf.result, domain, tags.aspf);
  const dkimAligned = aligned(result.alignment.dkim.result, domain, tags.adkim);
  if (status === 'pass' && (spfAligned || dkimAligned))
    return { finding: finding(base, 'found', used), result };
  const dkim = inputs.dkimPasses ? `DKIM d=${domain} is not aligned` : 'DKIM does not pass';
  const spf =
    inputs.spfDomain === undefined
      ? `SPF does not pass for the return path ${inputs.envelopeDomain}`
      : `the return path ${inputs.envelopeDomain} is not aligned with ${domain}${tags.aspf === 's' ? ' (aspf=s)' : ''}`;
  const problem = `Mail from ${domain} fails DMARC: ${dkim}, and ${spf}`;
  return { finding: finding(base, 'wrong', used, problem), result };
}

/** Whether mailauth's aligned domain also aligns in the record's mode (`s` strict: the same domain). */
function aligned(
  alignedDomain: string | false | undefined,
  domain: string,
  mode: string | undefined,
): boolean {
  if (!alignedDomain) return false;
  return mode?.toLowerCase() === 's' ? alignedDomain.toLowerCase() === domain : true;
}

function parseTags(text: string): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) tags[part.slice(0, eq).trim().toLowerCase()] = part.slice(eq + 1).trim();
  }
  return tags;
}

/**
 * The finding of the RFC 7489 7.1 record that lets `reportDomain` receive `domain`'s reports (optional:
 * without it only the reports are lost).
 */
export async function checkReportAuthorization(
  resolver: DnsResolver,
  domain: string,
  reportDomain: string,
): Promise<DomainFinding> {
  const name = `${domain}._report._dmarc.${reportDomain}`;
  const base: FindingBase = {
    kind: 'dmarc-report-auth',
    type: 'TXT',
    name,
    expected: 'v=DMARC1',
    optional: true,
  };
  const answer = await lookupTxt(resolver, name);
  if (answer.status === 'no-answer') return noAnswer(base, answer.code);
  const actual = answer.status === 'ok' ? answer.records : [];
  if (actual.some((text) => /^v=DMARC1\s*(?:;|$)/i.test(text.trim()))) return finding(base, 'found', actual);
  return finding(base, 'missing', actual, `${reportDomain} does not accept DMARC reports for ${domain}`);
}
