/**
 * Bounces counted by destination domain, from the signals the store keeps: for the dashboard (which
 * receiving domains refuse the sender, and why) and for a reputation guard (sender-side refusals per
 * project, broadcast or destination).
 */
import type { BounceData } from '../store/event-records.js';
import type { InboundSignalStore, SignalCountQuery } from '../store/inbound-signal-store.js';
import type { InboundSignalKind } from '../store/records.js';

/** The bounces of one destination domain. */
export interface DomainBounces {
  domain: string;
  /** Bounces that suppressed (or would have suppressed) the address: it does not exist. */
  recipientHard: number;
  /** Temporary or mailbox-side failures, counted towards the soft-bounce limit. */
  soft: number;
  /** Refusals of the sender (DMARC, blocklists, rates, content): the addresses are not at fault. */
  senderSide: number;
  /** The counts by class and reason, largest first (`unknown` for a signal kept before reasons). */
  reasons: Array<{ class: BounceData['class']; reason: string; count: number }>;
}

/** What `mailroom.bouncesByDomain` counts (`ref`: only that mailing's deliveries). */
export type BounceCountOptions = Omit<BounceCountQuery, 'mailingId'> & { ref?: string };

/** What {@link bouncesByDomain} counts. */
export interface BounceCountQuery {
  /** Only this mailing's deliveries (its store id). */
  mailingId?: string;
  /** Only this destination domain. */
  domain?: string;
  /** Only bounces received at or after this time. */
  since?: Date;
  /** Only these classes. @default all three */
  classes?: readonly BounceData['class'][];
  /** At most this many domains, those with the most bounces first. @default 20 */
  limit?: number;
}

const KIND_OF: Record<BounceData['class'], InboundSignalKind> = {
  'recipient-hard': 'hard-bounce',
  soft: 'soft-bounce',
  'sender-side': 'sender-side',
};

const CLASS_OF: Partial<Record<InboundSignalKind, BounceData['class']>> = {
  'hard-bounce': 'recipient-hard',
  'soft-bounce': 'soft',
  'sender-side': 'sender-side',
};

/** The project's bounces by destination domain, the domains with the most first. */
export async function bouncesByDomain(
  store: Pick<InboundSignalStore, 'countInboundSignals'>,
  projectId: string,
  query: BounceCountQuery = {},
): Promise<DomainBounces[]> {
  const classes = query.classes ?? (['recipient-hard', 'soft', 'sender-side'] as const);
  const q: SignalCountQuery = { projectId, kinds: classes.map((c) => KIND_OF[c]) };
  if (query.mailingId !== undefined) q.mailingId = query.mailingId;
  if (query.domain !== undefined) q.domain = query.domain.toLowerCase();
  if (query.since !== undefined) q.since = query.since;
  const byDomain = new Map<string, DomainBounces>();
  for (const group of await store.countInboundSignals(q)) {
    const cls = CLASS_OF[group.kind];
    if (!cls) continue;
    let entry = byDomain.get(group.domain);
    if (!entry) {
      entry = { domain: group.domain, recipientHard: 0, soft: 0, senderSide: 0, reasons: [] };
      byDomain.set(group.domain, entry);
    }
    if (cls === 'recipient-hard') entry.recipientHard += group.count;
    else if (cls === 'soft') entry.soft += group.count;
    else entry.senderSide += group.count;
    entry.reasons.push({ class: cls, reason: group.reason ?? 'unknown', count: group.count });
  }
  const total = (d: DomainBounces) => d.recipientHard + d.soft + d.senderSide;
  return [...byDomain.values()]
    .sort((a, b) => total(b) - total(a) || (a.domain < b.domain ? -1 : 1))
    .slice(0, Math.max(1, Math.min(query.limit ?? 20, 1000)));
}
