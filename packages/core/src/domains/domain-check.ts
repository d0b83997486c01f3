import { MailroomError } from '../base/errors.js';
import { checkBimi } from './check-bimi.js';
import { checkDkim, type DkimExpectation } from './check-dkim.js';
import { checkDmarc, checkReportAuthorization } from './check-dmarc.js';
import { checkReturnPathMx } from './check-return-path.js';
import { checkSpf } from './check-spf.js';
import { checkSelector } from './dkim-key.js';
import { createDnsResolver, type DnsResolver } from './dns-lookup.js';
import type { DomainFinding } from './domain-finding.js';
import { isWithinDomain, normalizeDomain } from './domain-name.js';
import { type ReturnPathPlan, reportDomainOf, type SpfRelay } from './domain-records.js';

/** What {@link checkDomain} checks. */
export interface DomainCheckOptions {
  /** The sending domain (normalised by the check: `Acme.COM.` is `acme.com`). */
  domain: string;
  /** The DKIM key or keys that must be published (two during a rotation). */
  dkim: DkimExpectation | readonly DkimExpectation[];
  /** The relay: its addresses are evaluated with SPF, its mechanisms expected in the record. */
  relay?: SpfRelay;
  /** The return path when bounces are on: its MX and SPF are checked, and DMARC aligns SPF on it. */
  returnPath?: ReturnPathPlan;
  /**
   * The DMARC reporting address the advised record names.
   * @default `dmarc@<domain>`
   */
  dmarcReports?: string;
  /**
   * Also look up the BIMI record (`default._bimi.<domain>`).
   * @default false
   */
  bimi?: boolean;
  /**
   * Where records are looked up.
   * @default createDnsResolver(): the system's servers, 2 s per query, 2 tries
   */
  resolver?: DnsResolver;
}

/**
 * The verdict on a domain:
 * - `verified`: every required record is found;
 * - `failed`: a required record is missing or wrong;
 * - `no-answer`: nothing is missing or wrong, but DNS did not answer for some record: not verified, try
 *   again later.
 */
export type DomainCheckState = 'verified' | 'failed' | 'no-answer';

/** What {@link checkDomain} found. */
export interface DomainCheck {
  /** The normalised domain. */
  readonly domain: string;
  /** The verdict, from the required findings. */
  readonly state: DomainCheckState;
  /**
   * One finding per record: DKIM keys, SPF, DMARC, the DMARC report authorisation (when reports go to
   * another domain), the return path's MX and SPF (when given), BIMI (when asked).
   */
  readonly findings: readonly DomainFinding[];
}

/**
 * Checks through DNS that a sending domain publishes what its mail needs to authenticate: the DKIM keys,
 * SPF for the From and return-path domains (evaluated with `mailauth` for the relay's addresses), a DMARC
 * record under which such mail passes and aligns, the return path's MX. This is the preflight an
 * application can run in its own CI.
 *
 * Never `verified` unless every required record was seen: a server that does not answer gives
 * `no-answer`.
 * @throws MailroomError `VALIDATION_FAILED` when the domain, a selector, the return-path domain or the relay
 * is malformed, or no DKIM key is given.
 * @example
 * const check = await checkDomain({ domain: 'acme.com', dkim: { selector: 'mr20260829' } });
 * if (check.state !== 'verified') console.table(check.findings);
 */
export async function checkDomain(options: DomainCheckOptions): Promise<DomainCheck> {
  const domain = normalizeDomain(options.domain);
  const resolver = options.resolver ?? createDnsResolver();
  const given: readonly DkimExpectation[] = Array.isArray(options.dkim)
    ? options.dkim
    : [options.dkim as DkimExpectation];
  if (given.length === 0) {
    const message = 'A domain check needs at least one DKIM key (its selector)';
    throw new MailroomError('VALIDATION_FAILED', message, {
      issues: [{ code: 'custom', path: ['dkim'], message }],
    });
  }
  const keys = given.map((key) => ({ ...key, selector: checkSelector(key.selector) }));
  const returnDomain = options.returnPath ? normalizeDomain(options.returnPath.domain) : undefined;
  const expectedMx =
    options.returnPath?.mx === undefined ? undefined : normalizeDomain(options.returnPath.mx);
  const reports = options.dmarcReports ?? `dmarc@${domain}`;
  const reportDomain = reportDomainOf(reports);

  const [dkim, spf, returnMx, returnSpf] = await Promise.all([
    Promise.all(keys.map((key) => checkDkim(resolver, domain, key))),
    checkSpf(resolver, 'spf', domain, options.relay),
    returnDomain === undefined ? undefined : checkReturnPathMx(resolver, returnDomain, expectedMx),
    returnDomain === undefined
      ? undefined
      : checkSpf(resolver, 'return-path-spf', returnDomain, options.relay),
  ]);
  const envelopeDomain = returnDomain ?? domain;
  const envelopeSpf = returnSpf ?? spf;
  const dmarc = await checkDmarc(resolver, domain, {
    envelopeDomain,
    ...(envelopeSpf.state === 'found' ? { spfDomain: envelopeDomain } : {}),
    dkimPasses: dkim.some((key) => key.state === 'found'),
    reports,
  });
  const findings: DomainFinding[] = [...dkim, spf, dmarc.finding];
  if (!isWithinDomain(reportDomain, domain)) {
    findings.push(await checkReportAuthorization(resolver, domain, reportDomain));
  }
  if (returnMx) findings.push(returnMx);
  if (returnSpf) findings.push(returnSpf);
  if (options.bimi) findings.push(await checkBimi(resolver, domain, dmarc.result));
  return { domain, state: checkVerdict(findings), findings };
}

/**
 * The verdict of findings: `failed` when a required finding is missing or wrong, else `no-answer` when one
 * got no answer, else `verified`.
 */
export function checkVerdict(findings: readonly DomainFinding[]): DomainCheckState {
  const required = findings.filter((found) => !found.optional);
  if (required.some((found) => found.state === 'missing' || found.state === 'wrong')) return 'failed';
  if (required.some((found) => found.state === 'no-answer')) return 'no-answer';
  return 'verified';
}
