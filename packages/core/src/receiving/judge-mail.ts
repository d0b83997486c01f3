/**
 * SPF, DKIM, DMARC and ARC of a received message: mailauth's `authenticate` in its parts (`dkimVerify`, `spf`,
 * `arc`, `dmarc`, in its order, with its Authentication-Results header), so that the SPF verdict can be reused
 * for the next message of the same relay and sender (`spf-cache.ts`). Only what the receiver asks for is done:
 * no `Received` header trusted, no ARC seal, no BIMI.
 */
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import type { ARCData, SPFResult } from 'mailauth';
import type { DnsResolver } from '../domains/dns-lookup.js';
import { mailauthResolver } from '../domains/dns-lookup.js';
import { loadMailauth } from '../domains/load-mailauth.js';
import { isCachedResolver } from './dns-cache.js';
import type { InboundAuthResults, ReceivingEnvelope } from './receiving-types.js';
import { cachedSpf, type SpfQuestion } from './spf-cache.js';

/** mailauth's own libmime (the header folding its `authenticate` applies), not a dependency of ours. */
let foldLines: ((text: string, length: number) => string) | undefined;

/**
 * The SPF verdicts kept per resolver (one a parse thread). Only through Mailroom's own caching resolver: an
 * app's resolver may answer differently from one message to the next, and its answers are not kept.
 */
const verdicts = new WeakMap<DnsResolver, (question: SpfQuestion) => Promise<SPFResult>>();

/** The verdicts and the `Authentication-Results` header `authenticate` gives for the same input. */
export async function judgeMail(
  input: Buffer,
  envelope: ReceivingEnvelope,
  judge: { resolver: DnsResolver; authServId: string },
): Promise<InboundAuthResults> {
  const mailauth = await loadMailauth();
  foldLines ??= (
    createRequire(createRequire(import.meta.url).resolve('mailauth'))('libmime') as {
      foldLines(text: string, length: number): string;
    }
  ).foldLines;
  const fold = foldLines;
  const resolver = mailauthResolver(judge.resolver).resolve;
  const mta = judge.authServId;
  const dkim = await mailauth.dkimVerify(input, { resolver, sender: envelope.envelopeFrom });
  let helo = envelope.helo ?? envelope.remoteAddress;
  if (isIP(helo)) helo = `[${helo}]`;
  let spf = verdicts.get(judge.resolver);
  if (!spf) {
    const check = (question: SpfQuestion) => mailauth.spf({ ...question, resolver });
    spf = isCachedResolver(judge.resolver) ? cachedSpf(check) : check;
    verdicts.set(judge.resolver, spf);
  }
  const spfResult = await spf({ ip: envelope.remoteAddress, sender: envelope.envelopeFrom, helo, mta });
  const arcResult = await mailauth.arc(dkim.arc as ARCData, { resolver });
  const lines: string[] = [];
  for (const row of dkim.results ?? []) lines.push(fold(row.info, 160));
  lines.push(fold(spfResult.info, 160));
  if (arcResult?.info) lines.push(fold(arcResult.info, 160));
  let dmarcResult: Awaited<ReturnType<typeof mailauth.dmarc>> = false;
  if (dkim.headerFrom) {
    dmarcResult = await mailauth.dmarc({
      headerFrom: dkim.headerFrom,
      spfDomains: spfResult.status.result === 'pass' && spfResult.domain ? [spfResult.domain] : [],
      dkimDomains: (dkim.results ?? [])
        .filter((r) => r.status.result === 'pass')
        .map((r) => ({
          id: r.id,
          domain: r.signingDomain,
          aligned: r.status.aligned,
          underSized: r.status.underSized,
        })),
      arcResult,
      resolver,
    });
    if (dmarcResult !== false && dmarcResult.info) lines.push(fold(dmarcResult.info, 160));
  }
  const header = `${spfResult.header}\r\nAuthentication-Results: ${mta};\r\n ${lines.join(';\r\n ')}`.trim();
  const results = dkim.results ?? [];
  return {
    spf: spfResult.status?.result ?? 'none',
    dkim:
      results.find((r) => r.status?.result === 'pass')?.status?.result ??
      results[0]?.status?.result ??
      'none',
    dmarc: dmarcResult === false ? 'none' : (dmarcResult.status?.result ?? 'none'),
    arc: arcResult.status?.result ?? 'none',
    header,
  };
}
