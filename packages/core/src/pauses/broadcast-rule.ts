import type { BaseContext } from '../context/base-context.js';
import type { PauseRule } from '../store/pause-store.js';
import type { MailingRecord } from '../store/records.js';
import type { BroadcastGuardRules } from './guard-options.js';

/** A broadcast's attempts and signals by kind. */
export interface Figures {
  attempts: number;
  'hard-bounce': number;
  complaint: number;
  'sender-side': number;
}

/** The signals a broadcast's rules count. */
export type BroadcastSignal = Exclude<keyof Figures, 'attempts'>;

/** No attempts, no signals. */
export function noFigures(): Figures {
  return { attempts: 0, 'hard-bounce': 0, complaint: 0, 'sender-side': 0 };
}

/** `a + sign * b`, field by field. */
export function addFigures(a: Figures, b: Figures, sign = 1): Figures {
  return {
    attempts: a.attempts + sign * b.attempts,
    'hard-bounce': a['hard-bounce'] + sign * b['hard-bounce'],
    complaint: a.complaint + sign * b.complaint,
    'sender-side': a['sender-side'] + sign * b['sender-side'],
  };
}

/**
 * The store's attempts of a broadcast (every worker's): its deliveries sent, bounced, complained or
 * failed. A count over the broadcast's deliveries: on a large one the dearest read of a guard's round
 * (26 ms for 100,000 on SQLite), so the guard reads it less often than the signals.
 */
export async function storeAttempts(ctx: BaseContext, mailing: MailingRecord): Promise<number> {
  const counts = await ctx.store.countDeliveries(mailing.id);
  return counts.sent + counts.bounced + counts.failed + counts.complained;
}

/** The store's signals of a broadcast (every worker's outcomes and every inbound signal), attempts 0. */
export async function storeSignals(ctx: BaseContext, mailing: MailingRecord): Promise<Figures> {
  const signals = await ctx.store.countInboundSignals({
    projectId: mailing.projectId,
    mailingId: mailing.id,
    kinds: ['hard-bounce', 'complaint', 'sender-side'],
  });
  const total = (kind: string) => signals.filter((s) => s.kind === kind).reduce((n, s) => n + s.count, 0);
  return {
    attempts: 0,
    'hard-bounce': total('hard-bounce'),
    complaint: total('complaint'),
    'sender-side': total('sender-side'),
  };
}

/** `into = a + b`, field by field, in place (the guard judges at every outcome: no allocation). */
export function sumFiguresInto(into: Figures, a: Figures, b: Figures): Figures {
  into.attempts = a.attempts + b.attempts;
  into['hard-bounce'] = a['hard-bounce'] + b['hard-bounce'];
  into.complaint = a.complaint + b.complaint;
  into['sender-side'] = a['sender-side'] + b['sender-side'];
  return into;
}

/** The number of signals (all kinds) of `f`. */
export function signalTotal(f: Figures): number {
  return f['hard-bounce'] + f.complaint + f['sender-side'];
}

/**
 * The broadcast rule `figures` cross, if any (hard bounces, then complaints, then sender-side refusals).
 * `since`: where the count starts (the broadcast's creation; null after a resume). Allocates only when a
 * rule is crossed: it runs at every outcome.
 */
export function crossedBroadcastRule(
  figures: Figures,
  b: Required<BroadcastGuardRules>,
  since: string | null,
): PauseRule | undefined {
  const tried = figures.attempts;
  const rate = (count: number) => (tried === 0 ? 0 : count / tried);
  const hard = figures['hard-bounce'];
  const complaints = figures.complaint;
  const refusals = figures['sender-side'];
  const rule = (
    name: string,
    signal: BroadcastSignal,
    count: number,
    threshold: number,
    minimum: number,
  ) => ({
    name,
    signal,
    count,
    attempts: tried,
    rate: rate(count),
    threshold,
    minimum,
    windowMs: null,
    since,
  });
  if (tried >= b.hardBounceMinAttempts && rate(hard) > b.hardBounceRate) {
    return rule('broadcast.hard-bounces', 'hard-bounce', hard, b.hardBounceRate, b.hardBounceMinAttempts);
  }
  if (complaints >= b.complaintMin && rate(complaints) > b.complaintRate) {
    return rule('broadcast.complaints', 'complaint', complaints, b.complaintRate, b.complaintMin);
  }
  if (refusals >= b.senderSideMin && rate(refusals) > b.senderSideRate) {
    return rule('broadcast.sender-side', 'sender-side', refusals, b.senderSideRate, b.senderSideMin);
  }
  return undefined;
}
