import type {
  ClaimedDelivery,
  DeliveryOutcome,
  DeliveryQueue,
  DeliveryRecord,
  MailingStatus,
} from '@mailroom/core';
import { clone } from '../memory-copy.js';
import type { State } from '../memory-state.js';
import { compare, fail } from '../memory-state.js';
import { writeOutbox } from './event-store.js';
import { isHeldByPause } from './pause-store.js';

/** Mailing statuses whose deliveries are never claimed. */
const PAUSED: readonly MailingStatus[] = ['cancelled', 'failed'];

/** `DeliveryQueue` in memory. Claims, leases and outcomes; every method checks and writes within one synchronous run. */
export function memoryDeliveryQueue(db: () => State): DeliveryQueue {
  return {
    async claimDeliveries({ now, limit, leaseMs }) {
      const s = db();
      const t = now.getTime();
      // The `limit` first due deliveries by (priority, nextAttemptAt, id) of each lane, kept sorted while
      // walking the open ones: single messages (priority 0) in one lane, a broadcast's (1, or absent) in a
      // lane per project, served round-robin (`DeliveryQueue.claimDeliveries`).
      const before = (a: DeliveryRecord, b: DeliveryRecord) =>
        (a.priority ?? 1) - (b.priority ?? 1) ||
        a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime() ||
        compare(a.id, b.id);
      const singles: DeliveryRecord[] = [];
      const broadcasts = new Map<string, DeliveryRecord[]>();
      for (const d of s.openDeliveries) {
        if (d.status !== 'queued' && d.status !== 'sending') {
          s.openDeliveries.delete(d);
          continue;
        }
        if (limit <= 0 || !isClaimable(s, d, t)) continue;
        let lane = singles;
        if ((d.priority ?? 1) !== 0) {
          lane = broadcasts.get(d.projectId) ?? [];
          broadcasts.set(d.projectId, lane);
        }
        keepFirst(lane, d, limit, before);
      }
      const due = singles;
      // The project with the oldest due delivery first; one delivery a turn, until the room is full.
      const lanes = [...broadcasts.values()].sort((a, b) =>
        before(a[0] as DeliveryRecord, b[0] as DeliveryRecord),
      );
      const taken: DeliveryRecord[] = [];
      for (let turn = 0; due.length + taken.length < limit && lanes.length > 0; ) {
        const at = turn % lanes.length;
        const lane = lanes[at] as DeliveryRecord[];
        taken.push(lane.shift() as DeliveryRecord);
        // An emptied lane leaves the round; the next lane then stands where it stood.
        if (lane.length === 0) lanes.splice(at, 1);
        else turn = at + 1;
      }
      due.push(...taken.sort(before));
      return due.map((d) => {
        d.status = 'sending';
        d.leaseExpiresAt = new Date(t + leaseMs);
        d.leaseToken += 1;
        d.attempts += 1;
        d.updatedAt = new Date(t);
        return clone(d) as ClaimedDelivery;
      });
    },
    async renewLeases(leases, until) {
      const s = db();
      return leases.flatMap(({ id, leaseToken }) => {
        const d = s.deliveries.get(id);
        if (d?.status !== 'sending' || d.leaseToken !== leaseToken) return [];
        d.leaseExpiresAt = new Date(until);
        return [id];
      });
    },
    async completeDeliveries(items) {
      const written: boolean[] = [];
      for (const { id, leaseToken, outcome } of items)
        written.push(completeOne(db(), id, leaseToken, outcome));
      return written;
    },
    async settleOpenDeliveries(mailingId, status, reason, now) {
      let changed = 0;
      for (const d of db().deliveries.values()) {
        if (d.mailingId !== mailingId) continue;
        const open =
          d.status === 'queued' ||
          (d.status === 'sending' && d.leaseExpiresAt !== null && d.leaseExpiresAt.getTime() < now.getTime());
        if (!open) continue;
        d.status = status;
        d.lastError = reason;
        d.leaseExpiresAt = null;
        d.updatedAt = new Date(now);
        changed += 1;
      }
      return changed;
    },
    async nextDueAt(now = new Date()) {
      const s = db();
      const t = now.getTime();
      let earliest: Date | undefined;
      for (const d of s.deliveries.values()) {
        if (d.status !== 'queued' || isPaused(s, d.mailingId) || isHeldByPause(s, d, t)) continue;
        if (!earliest || d.nextAttemptAt.getTime() < earliest.getTime()) earliest = d.nextAttemptAt;
      }
      return earliest && new Date(earliest);
    },
  };
}

function completeOne(s: State, id: string, leaseToken: number, outcome: DeliveryOutcome): boolean {
  const d = s.deliveries.get(id);
  if (d?.status !== 'sending' || d.leaseToken !== leaseToken) return false;
  if (outcome.status === 'queued' && !outcome.nextAttemptAt) {
    throw fail('a queued outcome needs nextAttemptAt', 'INTERNAL');
  }
  d.status = outcome.status;
  d.leaseExpiresAt = null;
  if (outcome.status === 'queued' && outcome.nextAttemptAt) d.nextAttemptAt = new Date(outcome.nextAttemptAt);
  if (outcome.lastResponse !== undefined) d.lastResponse = outcome.lastResponse;
  if (outcome.lastError !== undefined) d.lastError = outcome.lastError;
  if (outcome.sentAt !== undefined) d.sentAt = outcome.sentAt && new Date(outcome.sentAt);
  if (outcome.content !== undefined) d.content = clone(outcome.content);
  if (isUncounted(outcome)) d.attempts = Math.max(0, d.attempts - 1);
  d.updatedAt = new Date(outcome.now);
  writeOutbox(s.outbox, outcome.outbox);
  return true;
}

function isPaused(s: State, mailingId: string): boolean {
  const mailing = s.mailings.get(mailingId);
  return !mailing || PAUSED.includes(mailing.status);
}

function isClaimable(s: State, d: DeliveryRecord, t: number): boolean {
  const due =
    (d.status === 'queued' && d.nextAttemptAt.getTime() <= t) ||
    (d.status === 'sending' && d.leaseExpiresAt !== null && d.leaseExpiresAt.getTime() <= t);
  return due && !isPaused(s, d.mailingId) && !isHeldByPause(s, d, t);
}

/** Whether the outcome gives the claim's attempt back (`DeliveryOutcome.uncounted`). */
function isUncounted(outcome: DeliveryOutcome): boolean {
  return outcome.uncounted === true && ['queued', 'suppressed', 'skipped'].includes(outcome.status);
}

/** Insert `d` into `lane`, kept sorted by `before`, keeping only the `limit` first. */
function keepFirst(
  lane: DeliveryRecord[],
  d: DeliveryRecord,
  limit: number,
  before: (a: DeliveryRecord, b: DeliveryRecord) => number,
): void {
  if (lane.length === limit && before(d, lane[limit - 1] as DeliveryRecord) >= 0) return;
  let at = lane.length;
  while (at > 0 && before(d, lane[at - 1] as DeliveryRecord) < 0) at--;
  lane.splice(at, 0, d);
  if (lane.length > limit) lane.pop();
}
