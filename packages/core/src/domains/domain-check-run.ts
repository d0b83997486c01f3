import type { BaseContext } from '../context/base-context.js';
import type { DkimKeyRecord, DomainRecord, DomainState } from '../store/domain-store.js';
import type { OutboxWrite } from '../store/event-records.js';
import type { DkimExpectation } from './check-dkim.js';
import type { DnsResolver } from './dns-lookup.js';
import { checkDomain, checkVerdict, type DomainCheckState } from './domain-check.js';
import type { DomainFinding } from './domain-finding.js';
import type { SpfRelay } from './domain-records.js';
import { openKey } from './sealed-key.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** How soon a check that got no answer is tried again. */
const RETRY_NO_ANSWER_MS = 5 * MINUTE;
/** While a record is awaited (a new domain's, a rotation's new key): often. */
const AWAITING_MS = 10 * MINUTE;
/** A domain still pending after a day is looked at hourly. */
const PENDING_FOR_LONG_MS = DAY;
/** Times a check result is written again after its state moved under it (another process). */
const WRITE_ATTEMPTS = 3;

/** What running the check of a domain needs. */
export interface DomainCheckSettings {
  resolver: DnsResolver;
  relay: SpfRelay | undefined;
  /** How long a replaced key stays usable. */
  graceMs: number;
  secret: () => Promise<string>;
}

/** The outcome of one check, written. */
export interface DomainCheckRun {
  /** The domain as it is after the check (its keys moved on, its state and findings written). */
  record: DomainRecord;
  /** This check's verdict (`no-answer` leaves the state as it was). */
  check: DomainCheckState;
}

/**
 * Checks a domain through DNS and writes what it found: each key's rotation step (a `pending` key whose
 * record is seen becomes `active`, the key it replaces `retiring` for the grace period, a `retiring` key
 * past it `retired`), then the domain's state, findings and next check, with `domain.verified` or
 * `domain.failed` in the same write when the state changes so. Every step is a compare-and-set of the
 * store, so two processes checking one domain move it once. Internal.
 */
export async function runDomainCheck(
  ctx: BaseContext,
  settings: DomainCheckSettings,
  record: DomainRecord,
): Promise<DomainCheckRun> {
  const { store, clock } = ctx;
  const live = record.keys.filter((key) => key.state !== 'retired');
  const secret = await settings.secret();
  const expectations: DkimExpectation[] = live.map((key) => ({
    selector: key.selector,
    algorithm: key.algorithm,
    publicKey: key.publicKey,
    ...(key.sealedPrivateKey
      ? { privateKey: openKey(key.sealedPrivateKey, secret, `${record.domain}/${key.selector}`) }
      : {}),
  }));
  const result = await checkDomain({
    domain: record.domain,
    dkim: expectations,
    resolver: settings.resolver,
    ...(settings.relay ? { relay: settings.relay } : {}),
    ...(record.returnPath
      ? {
          returnPath: {
            domain: record.returnPath,
            ...(record.returnPathMx ? { mx: record.returnPathMx } : {}),
          },
        }
      : {}),
    ...(record.dmarcReports ? { dmarcReports: record.dmarcReports } : {}),
  });
  const findings = withRoles(result.findings, live, record.returnPathMx !== null);
  const check = checkVerdict(findings);
  const now = clock.now();
  await moveKeys(ctx, settings, record, live, findings, now);

  // Read again: the keys moved, and the next check depends on them.
  let current = await store.getDomain(record.projectId, record.domain);
  for (let attempt = 0; current && attempt < WRITE_ATTEMPTS; attempt++) {
    const from = current.state;
    const to = nextState(from, check);
    const written = await store.recordDomainCheck(current.id, from, {
      state: to,
      findings,
      checkedAt: now,
      nextCheckAt: new Date(now.getTime() + nextCheckIn(current, to, check, now)),
      ...(await announce(ctx, current, from, to, findings, now)),
    });
    if (written) break;
    current = await store.getDomain(record.projectId, record.domain);
  }
  const fresh = (await store.getDomain(record.projectId, record.domain)) ?? { ...record, findings };
  return { record: fresh, check };
}

/**
 * The findings with what the domain does not need marked optional: among the DKIM findings (first, one per
 * live key, in order) a rotation's new key until its record is seen and a retiring key (before any key was
 * active, the pending key is the one the domain needs); the return path's MX when the host it must name is
 * not known (the records to publish cannot name it either).
 */
function withRoles(
  findings: readonly DomainFinding[],
  live: readonly DkimKeyRecord[],
  mxKnown: boolean,
): DomainFinding[] {
  const anyActive = live.some((key) => key.state === 'active');
  return findings.map((found, i) => {
    if (found.kind === 'return-path-mx' && !mxKnown) return { ...found, optional: true };
    const key = i < live.length ? live[i] : undefined;
    if (!key || found.kind !== 'dkim') return found;
    const required = key.state === 'active' || (key.state === 'pending' && !anyActive);
    return required ? found : { ...found, optional: true };
  });
}

/** The rotation steps the findings allow, each a compare-and-set. */
async function moveKeys(
  ctx: BaseContext,
  settings: DomainCheckSettings,
  record: DomainRecord,
  live: readonly DkimKeyRecord[],
  findings: readonly DomainFinding[],
  now: Date,
): Promise<void> {
  const { store } = ctx;
  const active = live.filter((key) => key.state === 'active');
  for (const [i, key] of live.entries()) {
    if (key.state !== 'pending' || findings[i]?.state !== 'found') continue;
    if (await store.setDkimKeyState(record.id, key.selector, { from: 'pending', to: 'active', now })) {
      active.push({ ...key, state: 'active', activatedAt: now });
    }
  }
  // One key signs: the newest active one; the others stay valid for the grace period.
  active.sort((a, b) => (a.activatedAt?.getTime() ?? 0) - (b.activatedAt?.getTime() ?? 0));
  const retireAt = new Date(now.getTime() + settings.graceMs);
  for (const key of active.slice(0, -1)) {
    await store.setDkimKeyState(record.id, key.selector, { from: 'active', to: 'retiring', now, retireAt });
  }
  for (const key of live) {
    if (key.state === 'retiring' && key.retireAt && key.retireAt <= now) {
      await store.setDkimKeyState(record.id, key.selector, { from: 'retiring', to: 'retired', now });
    }
  }
}

/** A check that got no answer changes nothing; a domain never verified stays pending until it is. */
function nextState(from: DomainState, check: DomainCheckState): DomainState {
  if (check === 'verified') return 'verified';
  if (check === 'no-answer') return from;
  return from === 'pending' ? 'pending' : 'failed';
}

/**
 * When the domain is checked again: soon after no answer; often while a record is awaited (a new domain,
 * a rotation's key), hourly once pending for a day or while failed; daily once verified; and at the end
 * of a retiring key's grace period.
 */
function nextCheckIn(record: DomainRecord, state: DomainState, check: DomainCheckState, now: Date): number {
  let wait: number;
  if (check === 'no-answer') wait = RETRY_NO_ANSWER_MS;
  else if (state === 'pending')
    wait = now.getTime() - record.createdAt.getTime() < PENDING_FOR_LONG_MS ? AWAITING_MS : HOUR;
  else if (state === 'failed') wait = HOUR;
  else wait = record.keys.some((key) => key.state === 'pending') ? AWAITING_MS : DAY;
  for (const key of record.keys) {
    if (key.state === 'retiring' && key.retireAt) {
      wait = Math.min(wait, Math.max(0, key.retireAt.getTime() - now.getTime()));
    }
  }
  return wait;
}

/** `domain.verified` or `domain.failed` when the state changes so, for the write's outbox. */
async function announce(
  ctx: BaseContext,
  record: DomainRecord,
  from: DomainState,
  to: DomainState,
  findings: DomainFinding[],
  now: Date,
): Promise<{ outbox?: OutboxWrite }> {
  const type =
    from !== 'verified' && to === 'verified'
      ? 'domain.verified'
      : from === 'verified' && to === 'failed'
        ? 'domain.failed'
        : undefined;
  if (!type) return {};
  const outbox = await ctx.outbox.event(
    record.projectId,
    type,
    now,
    { mailingRef: null, deliveryId: null, address: null },
    { domain: { name: record.domain, state: to, previous_state: from, findings } },
  );
  return { outbox };
}
