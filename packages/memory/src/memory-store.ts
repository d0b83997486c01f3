import {
  type AudienceGroupRecord,
  type BatchRecord,
  type BatchWrite,
  type ClaimedDelivery,
  DELIVERY_STATUSES,
  type DeliveryCounts,
  type DeliveryOutcome,
  type DeliveryRecord,
  type IdempotencyRecord,
  type InboundSignalRecord,
  type MailingRecord,
  type MailingStatus,
  MailroomError,
  type ProfileRecord,
  type ProfileUpsert,
  type ProfileUpsertOptions,
  type ProjectRecord,
  type ProjectSecretRecord,
  type SenderRecord,
  type SourceJobRecord,
  type Store,
  type SuppressionRecord,
  TERMINAL_DELIVERY_STATUSES,
  type TemplateRecord,
} from '@mailroom/core';

import { memoryInbound } from './memory-inbound.js';

const DRIVER_NAME = 'memory';

/** Mailing statuses whose deliveries are never claimed. */
const PAUSED: readonly MailingStatus[] = ['cancelled', 'failed'];

/** Everything the store holds; unique keys are composite strings (see {@link key}). */
interface State {
  projects: Map<string, ProjectRecord>;
  secrets: Map<string, ProjectSecretRecord>;
  senders: Map<string, SenderRecord>;
  templates: Map<string, TemplateRecord>;
  groups: Map<string, AudienceGroupRecord>;
  groupIdByRef: Map<string, string>;
  /** groupId -> addresses of its members. */
  members: Map<string, Set<string>>;
  profiles: Map<string, ProfileRecord>;
  suppressions: Map<string, SuppressionRecord>;
  mailings: Map<string, MailingRecord>;
  mailingIdByRef: Map<string, string>;
  batches: Map<string, BatchRecord>;
  deliveries: Map<string, DeliveryRecord>;
  deliveryIdByAddress: Map<string, string>;
  /**
   * Deliveries that may be open (`queued` or `sending`), so that a claim does not walk the terminal
   * ones. A delivery never reopens once terminal, so terminal ones are simply dropped when met.
   */
  openDeliveries: Set<DeliveryRecord>;
  sourceJobs: Map<string, SourceJobRecord>;
  idempotency: Map<string, IdempotencyRecord>;
  settings: Map<string, string>;
  inboundSignals: Map<string, InboundSignalRecord>;
  softBounces: Map<string, number>;
}

/**
 * A Store that keeps everything in this process's memory: for tests, scripts and trying Mailroom out.
 * Rows are copied on the way in and out, so callers never share objects with the store. Every
 * method checks and writes within one synchronous run, which makes each primitive atomic against the
 * others in the same process; nothing is shared between processes (`multiProcess: false`).
 *
 * @example
 * ```ts
 * const mailroom = createMailroom({ store: memoryStore(), transport: memoryTransport() });
 * ```
 */
export function memoryStore(): Store {
  let state: State | undefined = emptyState();

  /** The live state, or `STORE_FAILED` after `close()`. */
  const db = (): State => {
    if (!state) throw fail('the store is closed');
    return state;
  };

  return {
    name: DRIVER_NAME,
    capabilities: { multiProcess: false },
    ...memoryInbound(db, key),

    async init() {
      db();
    },
    async close() {
      state = undefined;
    },

    async createProject(project, secret) {
      const s = db();
      if (s.projects.has(project.id)) throw conflict(`project ${project.id} exists`);
      if (s.secrets.has(secret.hash)) throw conflict('the secret hash exists');
      s.projects.set(project.id, clone(project));
      s.secrets.set(secret.hash, clone(secret));
    },
    async addProjectSecret(secret) {
      const s = db();
      if (s.secrets.has(secret.hash)) throw conflict('the secret hash exists');
      s.secrets.set(secret.hash, clone(secret));
    },
    async findSecret(hash) {
      const s = db();
      const secret = s.secrets.get(hash);
      const project = secret && s.projects.get(secret.projectId);
      return secret && project ? clone({ project, secret }) : undefined;
    },
    async getProject(id) {
      return cloneMaybe(db().projects.get(id));
    },
    async listProjects() {
      return clone([...db().projects.values()].sort(byCreatedAt));
    },

    async addSender(sender) {
      const s = db();
      const k = key(sender.projectId, sender.address);
      if (s.senders.has(k)) throw conflict(`sender ${sender.address} exists`);
      s.senders.set(k, clone(sender));
    },
    async findSender(projectId, address) {
      return cloneMaybe(db().senders.get(key(projectId, address)));
    },
    async listSenders(projectId) {
      const rows = [...db().senders.values()].filter((r) => r.projectId === projectId);
      return clone(rows.sort((a, b) => compare(a.address, b.address)));
    },

    async putTemplate(template) {
      db().templates.set(key(template.projectId, template.ref), clone(template));
    },
    async getTemplate(projectId, ref) {
      return cloneMaybe(db().templates.get(key(projectId, ref)));
    },
    async listTemplates(projectId) {
      const rows = [...db().templates.values()].filter((r) => r.projectId === projectId);
      return clone(rows.sort((a, b) => compare(a.ref, b.ref)));
    },

    async createGroup(group) {
      const s = db();
      const k = key(group.projectId, group.ref);
      if (s.groupIdByRef.has(k) || s.groups.has(group.id))
        throw conflict(`audience group ${group.ref} exists`);
      s.groups.set(group.id, clone(group));
      s.groupIdByRef.set(k, group.id);
    },
    async getGroup(projectId, ref) {
      const s = db();
      const id = s.groupIdByRef.get(key(projectId, ref));
      return cloneMaybe(id === undefined ? undefined : s.groups.get(id));
    },
    async listGroups(projectId) {
      const s = db();
      const rows = [...s.groups.values()].filter((g) => g.projectId === projectId);
      return rows
        .sort((a, b) => compare(a.ref, b.ref))
        .map((g) => ({ ...clone(g), members: s.members.get(g.id)?.size ?? 0 }));
    },
    async upsertProfiles(projectId, rows, options, now) {
      upsertProfiles(db(), projectId, rows, options, now);
    },
    async getProfile(projectId, address) {
      return cloneMaybe(db().profiles.get(key(projectId, address)));
    },
    async findProfiles(projectId, addresses) {
      const s = db();
      return addresses.flatMap((address) => {
        const profile = s.profiles.get(key(projectId, address));
        return profile ? [clone(profile)] : [];
      });
    },
    async setProfileStatus(projectId, address, status, now) {
      const s = db();
      const k = key(projectId, address);
      const profile = s.profiles.get(k);
      if (profile) {
        profile.status = status;
        profile.updatedAt = new Date(now);
      } else {
        s.profiles.set(k, bareProfile(projectId, address, now, status));
      }
    },
    async listGroupMembers(projectId, groupId, page) {
      const s = db();
      if (s.groups.get(groupId)?.projectId !== projectId) return [];
      const after = page.after ?? null;
      const list = [...(s.members.get(groupId) ?? [])]
        .filter((address) => after === null || compare(address, after) > 0)
        .sort(compare)
        .slice(0, page.limit);
      return list.flatMap((address) => {
        const profile = s.profiles.get(key(projectId, address));
        return profile ? [clone(profile)] : [];
      });
    },

    async addSuppression(suppression) {
      db().suppressions.set(key(suppression.projectId, suppression.address), clone(suppression));
    },
    async removeSuppression(projectId, address) {
      return db().suppressions.delete(key(projectId, address));
    },
    async findSuppressed(projectId, addresses) {
      const s = db();
      return addresses.flatMap((address) => {
        const row = s.suppressions.get(key(projectId, address));
        return row ? [clone(row)] : [];
      });
    },

    async commitBatch(write) {
      const s = db();
      const mailing = targetMailing(s, write);
      // Every check is above; from here on nothing can fail, so the write is all or nothing.
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
    async setMailingStatus(id, from, to, now) {
      const mailing = db().mailings.get(id);
      if (!mailing || !from.includes(mailing.status)) return false;
      mailing.status = to;
      mailing.updatedAt = new Date(now);
      return true;
    },
    async completeMailingIfSettled(id, now) {
      const s = db();
      const mailing = s.mailings.get(id);
      if (!mailing || (mailing.status !== 'queued' && mailing.status !== 'sending')) return false;
      for (const d of s.deliveries.values()) {
        if (d.mailingId === id && !TERMINAL_DELIVERY_STATUSES.includes(d.status)) return false;
      }
      for (const job of s.sourceJobs.values()) {
        if (job.mailingId === id && (job.status === 'pending' || job.status === 'running')) return false;
      }
      mailing.status = 'completed';
      mailing.updatedAt = new Date(now);
      return true;
    },

    async claimDeliveries({ now, limit, leaseMs }) {
      const s = db();
      const t = now.getTime();
      // The `limit` first due deliveries by (nextAttemptAt, id), kept sorted while walking the open ones.
      const due: DeliveryRecord[] = [];
      const before = (a: DeliveryRecord, b: DeliveryRecord) =>
        a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime() || compare(a.id, b.id);
      for (const d of s.openDeliveries) {
        if (d.status !== 'queued' && d.status !== 'sending') {
          s.openDeliveries.delete(d);
          continue;
        }
        if (limit <= 0 || !isClaimable(s, d, t)) continue;
        if (due.length === limit && before(d, due[limit - 1] as DeliveryRecord) >= 0) continue;
        let at = due.length;
        while (at > 0 && before(d, due[at - 1] as DeliveryRecord) < 0) at--;
        due.splice(at, 0, d);
        if (due.length > limit) due.pop();
      }
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
    async completeDelivery(id, leaseToken, outcome) {
      return completeOne(db(), id, leaseToken, outcome);
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
    async nextDueAt() {
      const s = db();
      let earliest: Date | undefined;
      for (const d of s.deliveries.values()) {
        if (d.status !== 'queued' || isPaused(s, d.mailingId)) continue;
        if (!earliest || d.nextAttemptAt.getTime() < earliest.getTime()) earliest = d.nextAttemptAt;
      }
      return earliest && new Date(earliest);
    },

    async claimSourceJob({ now, leaseMs }) {
      const t = now.getTime();
      const job = [...db().sourceJobs.values()]
        .filter(
          (j) =>
            j.status === 'pending' ||
            (j.status === 'running' && (j.leaseExpiresAt === null || j.leaseExpiresAt.getTime() <= t)),
        )
        .sort((a, b) => byCreatedAt(a, b))[0];
      if (!job) return undefined;
      job.status = 'running';
      job.leaseExpiresAt = new Date(t + leaseMs);
      job.leaseToken += 1;
      job.updatedAt = new Date(t);
      return clone(job);
    },
    async commitSourcePage(jobId, leaseToken, page, options) {
      if (options?.after) await options.after;
      const s = db();
      const job = s.sourceJobs.get(jobId);
      if (!job || job.leaseToken !== leaseToken) return undefined;
      const inserted = insertDeliveries(s, page.deliveries);
      upsertProfiles(s, job.projectId, page.profiles, page.profileOptions, page.now);
      Object.assign(job, clone(page.patch));
      job.leaseExpiresAt = new Date(page.leaseUntil);
      job.updatedAt = new Date(page.now);
      return { inserted };
    },
    async listSourceJobs(mailingId) {
      const rows = [...db().sourceJobs.values()].filter((j) => j.mailingId === mailingId);
      return clone(rows.sort(byCreatedAt));
    },

    async beginIdempotent(record, now) {
      const s = db();
      const k = key(record.projectId, record.key);
      const existing = s.idempotency.get(k);
      if (existing && existing.expiresAt.getTime() > now.getTime())
        return { created: false, existing: clone(existing) };
      s.idempotency.set(k, clone(record));
      return { created: true };
    },
    async finishIdempotent(projectId, key_, response) {
      const record = db().idempotency.get(key(projectId, key_));
      if (!record) return;
      record.state = 'done';
      record.response = clone(response);
    },
    async dropIdempotent(projectId, key_) {
      db().idempotency.delete(key(projectId, key_));
    },
    async pruneIdempotent(now, limit) {
      const records = db().idempotency;
      let removed = 0;
      for (const [k, record] of records) {
        if (removed >= limit) break;
        if (record.expiresAt.getTime() > now.getTime()) continue;
        records.delete(k);
        removed += 1;
      }
      return removed;
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
    async firstSentAt(mailingId) {
      let first: Date | undefined;
      for (const d of db().deliveries.values()) {
        if (d.mailingId !== mailingId || d.sentAt === null) continue;
        if (!first || d.sentAt.getTime() < first.getTime()) first = d.sentAt;
      }
      return first && new Date(first);
    },
    async pruneDeliveryContent(before, limit) {
      let cleared = 0;
      for (const d of db().deliveries.values()) {
        if (cleared >= limit) break;
        if (d.content === null || d.updatedAt.getTime() >= before.getTime()) continue;
        d.content = null;
        cleared += 1;
      }
      return cleared;
    },

    async ensureSetting(name, value) {
      const settings = db().settings;
      const stored = settings.get(name);
      if (stored !== undefined) return stored;
      settings.set(name, value);
      return value;
    },
  };
}

function emptyState(): State {
  return {
    projects: new Map(),
    secrets: new Map(),
    senders: new Map(),
    templates: new Map(),
    groups: new Map(),
    groupIdByRef: new Map(),
    members: new Map(),
    profiles: new Map(),
    suppressions: new Map(),
    mailings: new Map(),
    mailingIdByRef: new Map(),
    batches: new Map(),
    deliveries: new Map(),
    deliveryIdByAddress: new Map(),
    openDeliveries: new Set(),
    sourceJobs: new Map(),
    idempotency: new Map(),
    settings: new Map(),
    inboundSignals: new Map(),
    softBounces: new Map(),
  };
}

/**
 * The mailing a batch write goes to, after every check that may refuse the write: a fresh copy for
 * `create`, the stored row for an append. Writes nothing.
 */
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

/** Inserts deliveries whose (mailingId, address) is new; returns how many. */
function insertDeliveries(s: State, deliveries: readonly DeliveryRecord[]): number {
  let inserted = 0;
  for (const d of deliveries) {
    const k = key(d.mailingId, d.address);
    if (s.deliveryIdByAddress.has(k) || s.deliveries.has(d.id)) continue;
    const stored = clone(d);
    s.deliveries.set(d.id, stored);
    s.deliveryIdByAddress.set(k, d.id);
    s.openDeliveries.add(stored);
    inserted += 1;
  }
  return inserted;
}

/** Applies the rules of `ProfileUpsert` (records.ts) to each row, and the group membership. */
function upsertProfiles(
  s: State,
  projectId: string,
  rows: readonly ProfileUpsert[],
  options: ProfileUpsertOptions,
  now: Date,
): void {
  const members = options.groupId ? membersOf(s, options.groupId) : undefined;
  for (const row of rows) {
    const k = key(projectId, row.address);
    const existing = s.profiles.get(k);
    if (!existing) {
      s.profiles.set(k, {
        ...bareProfile(projectId, row.address, now, 'subscribed'),
        name: row.name ?? null,
        traits: clone(row.traits ?? {}),
        labels: [...new Set(row.labels ?? [])],
      });
    } else {
      const given = row.name !== undefined && row.name !== null;
      if (given && (options.onExistingProfile === 'override' || existing.name === null))
        existing.name = row.name ?? null;
      for (const [trait, value] of Object.entries(row.traits ?? {})) {
        if (!(trait in existing.traits) || options.onExistingTrait === 'override')
          existing.traits[trait] = clone(value);
      }
      existing.labels = [...new Set([...existing.labels, ...(row.labels ?? [])])];
      existing.updatedAt = new Date(now);
    }
    members?.add(row.address);
  }
}

function membersOf(s: State, groupId: string): Set<string> {
  let set = s.members.get(groupId);
  if (!set) {
    set = new Set();
    s.members.set(groupId, set);
  }
  return set;
}

function bareProfile(
  projectId: string,
  address: string,
  now: Date,
  status: ProfileRecord['status'],
): ProfileRecord {
  return {
    projectId,
    address,
    name: null,
    traits: {},
    status,
    labels: [],
    createdAt: new Date(now),
    updatedAt: new Date(now),
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
  d.updatedAt = new Date(outcome.now);
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
  return due && !isPaused(s, d.mailingId);
}

/** A composite key; NUL cannot occur in ids, refs or addresses. */
function key(a: string, b: string): string {
  return `${a}\u0000${b}`;
}

/** Code-unit order, the order of `ordered by address` in the Store contract. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byCreatedAt<T extends { createdAt: Date; id: string }>(a: T, b: T): number {
  return a.createdAt.getTime() - b.createdAt.getTime() || compare(a.id, b.id);
}

/**
 * A deep copy of a record. Records are plain data (JSON values, dates, arrays, plain objects), which a
 * direct copy handles many times faster than `structuredClone` (whose serialization dominated the cost
 * of accepting a batch); anything else, or a structure deeper than any record (a cycle), goes to
 * `structuredClone`.
 */
function clone<T>(value: T): T {
  return copy(value, 0) as T;
}

function cloneMaybe<T>(value: T | undefined): T | undefined {
  return value === undefined ? undefined : clone(value);
}

/** Nesting beyond which {@link copy} hands over to `structuredClone` (which copes with cycles). */
const MAX_COPY_DEPTH = 64;

function copy(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth > MAX_COPY_DEPTH) return structuredClone(value);
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copy(value[i], depth + 1);
    return out;
  }
  if (value instanceof Date) return new Date(value.getTime());
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = copy((value as Record<string, unknown>)[key], depth + 1);
    // An own `__proto__` key stays a key (an assignment would set the copy's prototype instead).
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    else out[key] = item;
  }
  return out;
}

function conflict(message: string): MailroomError {
  return new MailroomError('CONFLICT', message, { source: DRIVER_NAME });
}

function fail(message: string, code: 'STORE_FAILED' | 'INTERNAL' = 'STORE_FAILED'): MailroomError {
  return new MailroomError(code, message, { source: DRIVER_NAME });
}
