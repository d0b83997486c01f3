/**
 * What is decided about a claimed delivery before any work on it (no render, no send): the skips, in
 * order (sandbox, suppressed, unsubscribed, its topic refused, a sender-side block's hold ended unresumed,
 * past its retry window), and the waits (its destination or its
 * sender's warm-up has nothing for it now). Each check is one small step of an ordered list.
 */
import { hashedAddress } from '../base/address-hash.js';
import { foldAddress } from '../base/address-parts.js';
import type { Clock } from '../base/base-types.js';
import type { DeliveryOutcome } from '../store/delivery-queue.js';
import type { ClaimedDelivery, MailingRecord } from '../store/records.js';
import type { AudienceStore, ConsentStore, SourceJobStore } from '../store/store.js';
import { type DestinationGate, deferredOutcome } from './destination-gate.js';
import { holdExpired, isHeld } from './retry-by-reason.js';
import type { WarmupGate } from './warmup.js';
import type { ResolvedWorkerOptions } from './worker-options.js';

/** Why an address of a claim is not sent to: read once per claim. */
export type Block = 'suppressed' | 'unsubscribed' | 'erased';

/** What the skip checks read about one delivery. */
export interface SkipFacts {
  delivery: ClaimedDelivery;
  mailing: MailingRecord;
  /** The claim's blocked addresses (`blockedAddresses`). */
  blocked: Map<string, Block>;
  /** The claim's deliveries whose topic the contact's state refuses, by delivery id, with the reason. */
  topicBlocked?: ReadonlyMap<string, string>;
  /** When its retry window started (`retryWindowStart`). */
  since: Date;
  now: Date;
}

/** One skip: the outcome that ends the delivery unsent, or undefined to go on. */
type SkipCheck = (
  facts: SkipFacts,
  parts: CheckParts,
) => DeliveryOutcome | undefined | Promise<DeliveryOutcome | undefined>;

/** What the checks read besides the facts. */
export interface CheckParts {
  store: Pick<SourceJobStore, 'listSourceJobs'>;
  opts: Pick<ResolvedWorkerOptions, 'maxAgeMs'>;
}

/** The skips, in the order they are tried: the first that answers decides. */
const SKIP_CHECKS: readonly SkipCheck[] = [
  // Each skip is settled before anything is handed to the transport: not an attempt (`uncounted`).
  ({ mailing, now }) =>
    mailing.sandbox ? { status: 'skipped', lastError: 'sandbox', uncounted: true, now } : undefined,
  ({ delivery, blocked, now }) =>
    // Suppressions match the folded address (any case of the local part), as unsubscribed profiles do.
    blocked.get(blockKey(delivery.projectId, foldAddress(delivery.address))) === 'suppressed'
      ? { status: 'suppressed', lastError: 'address is suppressed', uncounted: true, now }
      : undefined,
  // An address erased from the project (right to erasure) is kept as its hash: never mailed again.
  ({ delivery, blocked, now }) =>
    blocked.get(blockKey(delivery.projectId, delivery.address)) === 'erased'
      ? { status: 'suppressed', lastError: 'address was erased', uncounted: true, now }
      : undefined,
  ({ delivery, mailing, blocked, now }, { store }) => {
    // An unsubscribed profile matches folded too (`Foo@` unsubscribed: no broadcast to `foo@` either).
    if (blocked.get(blockKey(delivery.projectId, foldAddress(delivery.address))) !== 'unsubscribed')
      return undefined;
    if (mailing.kind !== 'broadcast') return undefined;
    return sourceAllowsUnsubscribed(store, delivery).then((allowed) =>
      allowed ? undefined : { status: 'skipped', lastError: 'unsubscribed', uncounted: true, now },
    );
  },
  // A topic mailing: the contact's state for the topic, read at claim (`consent/topic-gate.ts`).
  ({ delivery, topicBlocked, now }) => {
    const reason = topicBlocked?.get(delivery.id);
    return reason === undefined ? undefined : { status: 'skipped', lastError: reason, now };
  },
  // Held for a sender-side block and claimed still held: its hold's deadline passed with no resume.
  ({ delivery, now }) => (isHeld(delivery) ? holdExpired(delivery, now) : undefined),
  ({ delivery, since, now }, { opts }) => {
    // A retry that became due while no worker ran, past its deadline: not sent.
    const expiry = opts.maxAgeMs > 0 ? since.getTime() + opts.maxAgeMs : Number.POSITIVE_INFINITY;
    return delivery.attempts > 1 && now.getTime() > expiry
      ? { status: 'failed', lastError: `gave up: older than ${opts.maxAgeMs} ms`, now }
      : undefined;
  },
];

/**
 * The outcome of the first skip that applies to the delivery, or undefined when it is to be sent.
 * Synchronous while the checks are (a promise only from one that asks the store), so the checks add no
 * wait to a delivery that nothing skips.
 */
export function skipBeforeWork(
  facts: SkipFacts,
  parts: CheckParts,
  from = 0,
): DeliveryOutcome | undefined | Promise<DeliveryOutcome | undefined> {
  for (let i = from; i < SKIP_CHECKS.length; i++) {
    const outcome = (SKIP_CHECKS[i] as SkipCheck)(facts, parts);
    if (outcome instanceof Promise) {
      return outcome.then((found) => found ?? skipBeforeWork(facts, parts, i + 1));
    }
    if (outcome) return outcome;
  }
  return undefined;
}

/** Where a delivery goes, as the waits read it. */
export interface WaitFacts {
  /** Its destination, when the engine has destinations. */
  destination: string | undefined;
  senderDomain: string;
  /** The transport route that will take it, when it has a name. */
  route: string | undefined;
}

/**
 * Known to take nothing now: put back, unattempted, before rendering (not rendered again and again). The
 * destination first, then the sender's and the route's warm-up.
 */
export function waitBeforeWork(
  facts: WaitFacts,
  gates: { destinations: DestinationGate | undefined; warmup: WarmupGate | undefined; clock: Clock },
): DeliveryOutcome | undefined {
  const { destination } = facts;
  const closed = destination !== undefined && gates.destinations?.closedUntil(destination);
  if (closed) return deferredOutcome(closed, `destination ${destination} waits`, gates.clock.now());
  const cold = gates.warmup?.closedUntil(facts.senderDomain, facts.route);
  if (cold) return deferredOutcome(cold.until, cold.reason, gates.clock.now());
  return undefined;
}

/** The key of an address of a project in {@link blockedAddresses}' map. */
function blockKey(projectId: string, address: string): string {
  return `${projectId}\n${address}`;
}

/**
 * Suppressed addresses (any mailing), erased ones (kept as hashes) and unsubscribed profiles (broadcasts)
 * of a claim, looked up once per claim. Suppressions and unsubscribed profiles are keyed by the folded
 * address (`foldAddress`), erased ones by the address itself. Read at send time, not accept time, so an unsubscribe between the
 * two is honoured.
 */
export async function blockedAddresses(
  store: Pick<AudienceStore, 'findUnsubscribed' | 'findSuppressed'> &
    Pick<ConsentStore, 'findErasedAddresses'>,
  claimed: ClaimedDelivery[],
): Promise<Map<string, Block>> {
  const blocked = new Map<string, Block>();
  const byProject = new Map<string, Set<string>>();
  for (const d of claimed) {
    const set = byProject.get(d.projectId) ?? new Set<string>();
    byProject.set(d.projectId, set);
    set.add(d.address);
  }
  for (const [projectId, set] of byProject) {
    const addresses = [...set];
    // Both come back folded (`foldAddress`): their checks look the delivery up folded too.
    for (const folded of await store.findUnsubscribed(projectId, addresses)) {
      blocked.set(blockKey(projectId, folded), 'unsubscribed');
    }
    for (const s of await store.findSuppressed(projectId, addresses)) {
      blocked.set(blockKey(projectId, s.address), 'suppressed');
    }
    const hashes = new Map(addresses.map((a) => [hashedAddress(projectId, a), a]));
    for (const hashed of await store.findErasedAddresses(projectId, [...hashes.keys()])) {
      const address = hashes.get(hashed);
      if (address !== undefined) blocked.set(blockKey(projectId, address), 'erased');
    }
  }
  return blocked;
}

/** Whether the delivery's source says `includeUnsubscribed` (deliveries of a source carry its job's id as batch id). */
async function sourceAllowsUnsubscribed(
  store: Pick<SourceJobStore, 'listSourceJobs'>,
  delivery: ClaimedDelivery,
): Promise<boolean> {
  if (!delivery.batchId.startsWith('src_')) return false;
  const job = (await store.listSourceJobs(delivery.mailingId)).find((j) => j.id === delivery.batchId);
  return (job?.config as { includeUnsubscribed?: boolean } | undefined)?.includeUnsubscribed === true;
}

/**
 * When the retry window (`maxAgeMs`) of a delivery started: its first attempt. A worker that was down
 * past `scheduleFor` still gives a late broadcast its full window. The first attempt's time is not
 * stored; it is at least the current retry's due time minus the longest the backoff could have waited
 * between the attempts so far, and never before the delivery became due.
 */
export function retryWindowStart(
  delivery: ClaimedDelivery,
  mailing: MailingRecord,
  now: Date,
  opts: Pick<ResolvedWorkerOptions, 'retryBaseMs' | 'retryMaxMs'>,
): Date {
  if (delivery.attempts <= 1) return now;
  const scheduled = mailing.options.scheduleFor;
  const due = scheduled && scheduled > delivery.createdAt ? scheduled : delivery.createdAt;
  let waited = 0;
  for (let attempt = 1; attempt < delivery.attempts; attempt++) {
    waited += Math.min(opts.retryMaxMs, opts.retryBaseMs * 2 ** (attempt - 1));
  }
  const firstAttempt = delivery.nextAttemptAt.getTime() - waited;
  return new Date(Math.min(now.getTime(), Math.max(due.getTime(), firstAttempt)));
}

/**
 * Whether the delivery's address is an unsubscribed profile of its project: a broadcast delivery of it
 * that was sent went past consent (`includeUnsubscribed`), and is recorded in the person's history.
 */
export function isUnsubscribedAddress(blocked: Map<string, Block>, delivery: ClaimedDelivery): boolean {
  return blocked.get(blockKey(delivery.projectId, delivery.address)) === 'unsubscribed';
}
