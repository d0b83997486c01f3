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
