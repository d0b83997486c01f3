import {
  type BatchWrite,
  DELIVERY_STATUSES,
  type DeliveryCounts,
  type MailingRecord,
  type MailingStore,
  MailroomError,
  TERMINAL_DELIVERY_STATUSES,
} from '@mailroom/core';
import { clone, cloneMaybe } from '../memory-copy.js';
import type { State } from '../memory-state.js';
import { byCreatedAt, compare, conflict, DRIVER_NAME, key } from '../memory-state.js';
import { insertDeliveries, upsertProfiles } from '../memory-writes.js';
import { writeOutbox } from './event-store.js';

/** `MailingStore` in memory. Mailings, batches, their status, and the reads of their deliveries; every method checks and writes within one synchronous run. */
export function memoryMailingStore(db: () => State): MailingStore {
  return {
    async commitBatch(write) {
      const s = db();
      const mailing = targetMailing(s, write);
      // Every check is above; from here on nothing can fail, so the write is all or nothing.
      return applyWrite(s, write, mailing);
    },
    async commitBatches(writes) {
      const s = db();
      // Every check first (targets, and refs unique within the call too): then nothing can fail.
      const refs = new Set<string>();
      const mailings = writes.map((write) => {
        const mailing = targetMailing(s, write);
        if ('create' in write.target) {
          const ref = key(mailing.projectId, mailing.ref);
          if (refs.has(ref)) throw conflict(`mailing ${mailing.ref} already exists`);
          refs.add(ref);
        }
        return mailing;
      });
      return writes.map((write, i) => applyWrite(s, write, mailings[i] as MailingRecord));
    },
    async getMailing(projectId, ref) {
      const s = db();
      const id = s.mailingIdByRef.get(key(projectId, ref));
      return cloneMaybe(id === undefined ? undefined : s.mailings.get(id));
    },
    async getMailingById(id) {
      return cloneMaybe(db().mailings.get(id));
    },
    async listMailings(projectId, kind, page) {
      const s = db();
      const rows = [...s.mailings.values()]
        .filter((m) => m.projectId === projectId && m.kind === kind)
        .sort((a, b) => -byCreatedAt(a, b));
      let start = 0;
      if (page.after) {
        start = rows.findIndex((m) => m.id === page.after) + 1;
        if (start === 0) return [];
      }
      return clone(rows.slice(start, start + page.limit));
    },
    async setMailingStatus(id, from, to, now, outbox) {
      const mailing = db().mailings.get(id);
      if (!mailing || !from.includes(mailing.status)) return false;
      writeOutbox(db().outbox, outbox);
      mailing.status = to;
      mailing.updatedAt = new Date(now);
      return true;
    },
    async completeMailingIfSettled(id, now, outbox) {
      const s = db();
      const mailing = s.mailings.get(id);
      if (!mailing || (mailing.status !== 'queued' && mailing.status !== 'sending')) return false;
      for (const d of s.deliveries.values()) {
        if (d.mailingId === id && !TERMINAL_DELIVERY_STATUSES.includes(d.status)) return false;
      }
      for (const job of s.sourceJobs.values()) {
        if (job.mailingId === id && (job.status === 'pending' || job.status === 'running')) return false;
      }
      writeOutbox(s.outbox, outbox);
      mailing.status = 'completed';
      mailing.updatedAt = new Date(now);
      return true;
    },
    async rescheduleMailing(id, scheduleFor, status, now) {
      const s = db();
      const mailing = s.mailings.get(id);
      if (mailing?.status !== 'scheduled') return false;
      mailing.status = status;
      mailing.options.scheduleFor = new Date(scheduleFor);
      mailing.updatedAt = new Date(now);
      for (const d of s.deliveries.values()) {
        if (d.mailingId !== id || d.status !== 'queued' || d.attempts !== 0) continue;
        d.nextAttemptAt = new Date(scheduleFor);
        d.updatedAt = new Date(now);
      }
      return true;
    },
    async getDelivery(id) {
      return cloneMaybe(db().deliveries.get(id));
    },
    async findDelivery(mailingId, address) {
      const s = db();
      const id = s.deliveryIdByAddress.get(key(mailingId, address));
      return cloneMaybe(id === undefined ? undefined : s.deliveries.get(id));
    },
    async listDeliveries(mailingId, page) {
      const after = page.after ?? null;
      const rows = [...db().deliveries.values()].filter(
        (d) =>
          d.mailingId === mailingId &&
          (page.status === undefined || d.status === page.status) &&
          (after === null || compare(d.address, after) > 0),
      );
      return clone(rows.sort((a, b) => compare(a.address, b.address)).slice(0, page.limit));
    },
    async countDeliveries(mailingId) {
      const counts = Object.fromEntries(DELIVERY_STATUSES.map((st) => [st, 0])) as DeliveryCounts;
      for (const d of db().deliveries.values()) if (d.mailingId === mailingId) counts[d.status] += 1;
      return counts;
    },
    async countWaitingByHour(mailingId, now) {
      const byHour = new Map<number, number>();
      for (const d of db().deliveries.values()) {
        if (d.mailingId !== mailingId || d.status !== 'queued' || d.nextAttemptAt <= now) continue;
        const t = d.nextAttemptAt.getTime();
        const hour = t - (t % 3_600_000);
        byHour.set(hour, (byHour.get(hour) ?? 0) + 1);
      }
      return [...byHour]
        .sort((a, b) => a[0] - b[0])
        .map(([hour, count]) => ({ hour: new Date(hour), count }));
    },
    async firstSentAt(mailingId) {
      let first: Date | undefined;
      for (const d of db().deliveries.values()) {
        if (d.mailingId !== mailingId || d.sentAt === null) continue;
        if (!first || d.sentAt.getTime() < first.getTime()) first = d.sentAt;
      }
      return first && new Date(first);
    },
  };
}

/**
 * The mailing a batch write goes to, after every check that may refuse the write: a fresh copy for
 * `create`, the stored row for an append. Writes nothing.
 */
/** Writes `write` on `mailing` (its checked target): after the checks, where nothing can fail. */
function applyWrite(s: State, write: BatchWrite, mailing: MailingRecord) {
  if ('create' in write.target) {
    s.mailings.set(mailing.id, mailing);
    s.mailingIdByRef.set(key(mailing.projectId, mailing.ref), mailing.id);
  } else {
    mailing.status = write.target.setStatus;
  }
  mailing.batchCount += 1;
  mailing.updatedAt = new Date(write.now);
  s.batches.set(write.batch.id, clone(write.batch));
  const inserted = insertDeliveries(s, write.deliveries);
  upsertProfiles(s, mailing.projectId, write.profiles, write.profileOptions, write.now);
  for (const job of write.sourceJobs) s.sourceJobs.set(job.id, clone(job));
  return { inserted, mailing: clone(mailing) };
}

function targetMailing(s: State, write: BatchWrite): MailingRecord {
  const { target } = write;
  if (s.batches.has(write.batch.id)) throw conflict(`batch ${write.batch.id} exists`);
  if ('create' in target) {
    const m = target.create;
    if (s.mailings.has(m.id) || s.mailingIdByRef.has(key(m.projectId, m.ref))) {
      throw conflict(`mailing ${m.ref} exists`);
    }
    return clone(m);
  }
  const mailing = s.mailings.get(target.mailingId);
  if (!mailing)
    throw new MailroomError('NOT_FOUND', `mailing ${target.mailingId} not found`, { source: DRIVER_NAME });
  if (!target.allowStatus.includes(mailing.status)) {
    throw new MailroomError('BROADCAST_CLOSED', `mailing ${mailing.ref} is ${mailing.status}`, {
      source: DRIVER_NAME,
    });
  }
  return mailing;
}
