import type {
  InboundSignalRecord,
  InboundSignalResult,
  InboundSignalStore,
  InboundSignalWrite,
  SignalCount,
  SignalCountQuery,
  SuppressionRecord,
} from '@mailroom/core';
import { foldAddress } from '@mailroom/core';
import type { State } from '../memory-state.js';
import { key } from '../memory-state.js';
import { writeOutbox } from './event-store.js';

/** `InboundSignalStore` in memory; each call checks and writes within one synchronous run. */
export function memoryInboundSignalStore(state: () => State): InboundSignalStore {
  return {
    async applyInboundSignal(write: InboundSignalWrite): Promise<InboundSignalResult> {
      const s = state();
      const { signal, now } = write;
      const result: InboundSignalResult = {
        applied: false,
        deliveryChanged: false,
        suppressed: false,
        softBounces: null,
      };
      if (s.inboundSignals.has(signal.dedupeKey)) return result;
      s.inboundSignals.set(signal.dedupeKey, structuredClone(signal));
      result.applied = true;
      const d = s.deliveries.get(signal.deliveryId);
      if (write.delivery && d && write.delivery.from.includes(d.status)) {
        d.status = write.delivery.status;
        d.lastError = write.delivery.lastError;
        d.updatedAt = new Date(now);
        result.deliveryChanged = true;
      }
      const addressKey = key(signal.projectId, signal.address);
      const suppress = (row: SuppressionRecord) => {
        // Stored folded, as addSuppression does: case variants of an address are one suppression.
        const address = foldAddress(row.address);
        const k = key(row.projectId, address);
        if (s.suppressions.has(k)) return;
        s.suppressions.set(k, { ...structuredClone(row), address });
        result.suppressed = true;
      };
      if (write.resetSoftBounces) {
        s.softBounces.delete(addressKey);
        result.softBounces = 0;
      }
      if (write.softBounce) {
        const count = (s.softBounces.get(addressKey) ?? 0) + 1;
        s.softBounces.set(addressKey, count);
        result.softBounces = count;
        if (count >= write.softBounce.suppressAt) suppress(write.softBounce.suppression);
      }
      if (write.mailboxUnavailable) {
        const rule = write.mailboxUnavailable;
        const count = recipientSideBounces(s, signal, rule);
        result.mailboxUnavailable = count;
        if (count >= rule.suppressAt) suppress(rule.suppression);
      }
      if (write.suppress) suppress(write.suppress);
      if (write.unsubscribe) {
        const profile = s.profiles.get(addressKey);
        if (profile) {
          profile.status = 'unsubscribed';
          profile.updatedAt = new Date(now);
        } else {
          s.profiles.set(addressKey, {
            projectId: signal.projectId,
            address: signal.address,
            name: null,
            traits: {},
            status: 'unsubscribed',
            labels: [],
            createdAt: new Date(now),
            updatedAt: new Date(now),
          });
        }
      }
      writeOutbox(s.outbox, write.outbox);
      return result;
    },

    async listInboundSignals(deliveryId) {
      const rows = [...state().inboundSignals.values()].filter((r) => r.deliveryId === deliveryId);
      rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
      return structuredClone(rows);
    },

    async countInboundSignals(query) {
      const groups = new Map<string, SignalCount>();
      for (const r of state().inboundSignals.values()) {
        if (!matches(r, query)) continue;
        const k = `${r.kind}\n${r.domain}\n${r.reason ?? ''}\n${r.reason === null ? 0 : 1}`;
        const group = groups.get(k);
        if (group) group.count++;
        else groups.set(k, { kind: r.kind, domain: r.domain, reason: r.reason, count: 1 });
      }
      return [...groups.values()].sort(
        (a, b) =>
          b.count - a.count ||
          compare(a.domain, b.domain) ||
          compare(a.kind, b.kind) ||
          compare(a.reason, b.reason),
      );
    },
  };
}

const BOUNCE_KINDS = new Set(['hard-bounce', 'soft-bounce', 'sender-side']);

/** The address's recipient-side bounces since its last delivery (see `InboundSignalWrite`). */
function recipientSideBounces(
  s: State,
  signal: InboundSignalRecord,
  rule: NonNullable<InboundSignalWrite['mailboxUnavailable']>,
): number {
  const mine = [...s.inboundSignals.values()].filter(
    (r) => r.projectId === signal.projectId && r.address === signal.address,
  );
  let after = rule.since.getTime();
  for (const r of mine) {
    if (r.kind === 'delivered') after = Math.max(after, r.createdAt.getTime() + 1);
  }
  const bounced = new Set(
    [...s.inboundSignals.values()].filter((r) => BOUNCE_KINDS.has(r.kind)).map((r) => r.deliveryId),
  );
  for (const d of s.deliveries.values()) {
    if (d.projectId !== signal.projectId || d.address !== signal.address) continue;
    if (d.status !== 'sent' || !d.sentAt || bounced.has(d.id)) continue;
    const mailing = s.mailings.get(d.mailingId);
    if (!mailing || mailing.updatedAt.getTime() < rule.since.getTime()) continue;
    after = Math.max(after, d.sentAt.getTime() + 1);
  }
  const deliveries = new Set<string>();
  for (const r of mine) {
    if (r.kind !== 'soft-bounce' || r.reason === null || !rule.reasons.includes(r.reason)) continue;
    if (r.createdAt.getTime() >= after) deliveries.add(r.deliveryId);
  }
  return deliveries.size;
}

function matches(r: InboundSignalRecord, q: SignalCountQuery): boolean {
  return (
    r.projectId === q.projectId &&
    q.kinds.includes(r.kind) &&
    (q.mailingId === undefined || r.mailingId === q.mailingId) &&
    (q.domain === undefined || r.domain === q.domain) &&
    (q.since === undefined || r.createdAt.getTime() >= q.since.getTime())
  );
}

/** Ascending, a null first (as SQL orders nulls first ascending on SQLite and MySQL). */
function compare(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}
