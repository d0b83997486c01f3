import type { SPFResult } from 'mailauth';

/**
 * How long an SPF verdict is reused for the same sender address, connecting IP, HELO and receiving host.
 * Shorter than the DNS cache's 30 s (`dns-cache.ts`), which the check's lookups go through as well: a changed
 * SPF record is seen at most 40 s later.
 */
export const SPF_VERDICT_MS = 10_000;
/** Verdicts kept at once; the oldest go first. */
const KEPT = 1_000;

/** The inputs an SPF check reads (RFC 7208: the IP, the MAIL FROM address, the HELO name; the host names itself). */
export interface SpfQuestion {
  ip: string;
  sender: string;
  helo: string;
  mta: string;
}

/**
 * `check` with its verdicts kept {@link SPF_VERDICT_MS} per exact question: a relay sending many messages from
 * the same address asks once. mailauth's check costs ~0.1 ms of CPU even when every DNS answer is cached (an
 * IP and CIDR parse per mechanism, a schema validation), a share of a received message's budget. The
 * verdict is a function of the question and the DNS answers (macros may read the address's local part, so
 * the whole address is in the key); a `temperror` is not kept, so the next message asks again. Callers
 * share the verdict object: they read it and must not change it.
 */
export function cachedSpf(
  check: (question: SpfQuestion) => Promise<SPFResult>,
  options: { ms?: number; now?: () => number } = {},
): (question: SpfQuestion) => Promise<SPFResult> {
  const ms = options.ms ?? SPF_VERDICT_MS;
  const now = options.now ?? Date.now;
  const kept = new Map<string, { until: number; verdict: Promise<SPFResult> }>();
  return async (question) => {
    const key = `${question.ip}\n${question.sender.toLowerCase()}\n${question.helo.toLowerCase()}\n${question.mta}`;
    const found = kept.get(key);
    if (found && found.until > now()) return found.verdict;
    if (found) kept.delete(key);
    const entry = { until: now() + ms, verdict: check(question) };
    kept.set(key, entry);
    if (kept.size > KEPT) kept.delete(kept.keys().next().value as string);
    try {
      const verdict = await entry.verdict;
      if (verdict.status?.result === 'temperror' && kept.get(key) === entry) kept.delete(key);
      return verdict;
    } catch (error) {
      if (kept.get(key) === entry) kept.delete(key);
      throw error;
    }
  };
}
