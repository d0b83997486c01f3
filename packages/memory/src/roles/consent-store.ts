import type {
  ConsentRecord,
  ConsentStore,
  ProfileRecord,
  TopicRecord,
  TopicStateRecord,
} from '@mailroom/core';
import { clone } from '../memory-copy.js';
import type { State } from '../memory-state.js';
import { compare, exists, key } from '../memory-state.js';
import { bareProfile, membersOf } from '../memory-writes.js';
import { writeOutbox } from './event-store.js';

/**
 * `ConsentStore` in memory: topics by key(projectId, key), topic states by key(key(projectId, address),
 * topicKey), and the history as one list in append order.
 */
export function memoryConsentStore(db: () => State): ConsentStore {
  const statesOf = (s: State, projectId: string, address: string) =>
    s.consent.states.get(key(projectId, address));

  return {
    async createTopic(topic) {
      const s = db();
      const k = key(topic.projectId, topic.key);
      if (s.consent.topics.has(k)) throw exists(`topic ${topic.key}`, topic.projectId);
      s.consent.topics.set(k, clone(topic));
    },
    async getTopic(projectId, topicKey) {
      const topic = db().consent.topics.get(key(projectId, topicKey));
      return topic ? clone(topic) : undefined;
    },
    async listTopics(projectId) {
      return [...db().consent.topics.values()]
        .filter((t) => t.projectId === projectId)
        .sort((a, b) => compare(a.key, b.key))
        .map((t) => clone(t));
    },
    async updateTopic(projectId, topicKey, change, now) {
      const topic = db().consent.topics.get(key(projectId, topicKey));
      if (!topic) return undefined;
      const defined = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined));
      Object.assign(topic, clone(defined), { updatedAt: new Date(now) } satisfies Partial<TopicRecord>);
      return clone(topic);
    },
    async deleteTopic(projectId, topicKey) {
      const s = db();
      if (!s.consent.topics.delete(key(projectId, topicKey))) return false;
      for (const [k, states] of s.consent.states) {
        if (k.startsWith(key(projectId, ''))) states.delete(topicKey);
      }
      return true;
    },
    async listTopicMembers(projectId, groupId, topic, page) {
      const s = db();
      if (s.groups.get(groupId)?.projectId !== projectId) return [];
      const after = page.after ?? null;
      const out: ProfileRecord[] = [];
      const sorted = [...(s.members.get(groupId) ?? [])]
        .filter((address) => after === null || compare(address, after) > 0)
        .sort(compare);
      for (const address of sorted) {
        if (out.length >= page.limit) break;
        const profile = s.profiles.get(key(projectId, address));
        if (!profile) continue;
        const state = statesOf(s, projectId, address)?.get(topic.key)?.state;
        // An explicit state decides (`pending`, of double opt-in, is a no), else the default.
        const allowed = state === undefined ? topic.defaultState === 'opt-out' : state === 'subscribed';
        if (allowed) out.push(clone(profile));
      }
      return out;
    },
    async topicStates(projectId, address) {
      const states = statesOf(db(), projectId, address);
      return [...(states?.values() ?? [])].sort((a, b) => compare(a.topicKey, b.topicKey)).map(clone);
    },
    async findTopicStates(projectId, topicKey, addresses) {
      const s = db();
      const out: TopicStateRecord[] = [];
      for (const address of new Set(addresses)) {
        const state = statesOf(s, projectId, address)?.get(topicKey);
        if (state) out.push(clone(state));
      }
      return out;
    },
    async writeConsent(write, outbox) {
      const s = db();
      const { projectId, address, now } = write;
      const k = key(projectId, address);
      const profile = s.profiles.get(k);
      if (!profile) s.profiles.set(k, bareProfile(projectId, address, now, write.status ?? 'subscribed'));
      else if (write.status) {
        profile.status = write.status;
        profile.updatedAt = new Date(now);
      }
      const states = s.consent.states.get(k) ?? new Map<string, TopicStateRecord>();
      for (const change of write.topics ?? []) {
        if (change.state === null) states.delete(change.topicKey);
        else {
          states.set(change.topicKey, {
            projectId,
            address,
            topicKey: change.topicKey,
            state: change.state,
            updatedAt: new Date(now),
          });
        }
      }
      if (states.size > 0) s.consent.states.set(k, states);
      else s.consent.states.delete(k);
      for (const group of write.groups ?? []) {
        if (group.member) membersOf(s, group.groupId).add(address);
        else s.members.get(group.groupId)?.delete(address);
      }
      for (const record of write.records) s.consent.records.push(clone(record));
      writeOutbox(s.outbox, outbox);
    },
    async listConsentRecords(projectId, address, page) {
      const all = db()
        .consent.records.filter((r) => r.projectId === projectId && r.address === address)
        .sort(byTime);
      const from = page.after ? all.findIndex((r) => r.id === page.after) + 1 : 0;
      return all.slice(from, from + page.limit).map(clone);
    },
    async eraseConsent(projectId, address, hashed, record) {
      const s = db();
      s.consent.states.delete(key(projectId, address));
      // A signup names the address too: it goes with the states (the history keeps the evidence).
      for (const [id, signup] of s.signup.signups) {
        if (signup.projectId !== projectId || signup.address !== address) continue;
        s.signup.signups.delete(id);
        s.signup.idByKey.delete(key(key(projectId, signup.formRef), address));
      }
      for (const r of s.consent.records) {
        if (r.projectId !== projectId || r.address !== address) continue;
        r.address = hashed;
        r.ip = null;
        r.userAgent = null;
      }
      s.consent.records.push(clone(record));
      const erasedKey = key(projectId, hashed);
      if (!s.consent.erased.has(erasedKey)) {
        s.consent.erased.set(erasedKey, { projectId, hashed, erasedAt: new Date(record.at) });
      }
    },
    async appendConsentRecords(records) {
      const s = db();
      for (const record of records) s.consent.records.push(clone(record));
    },
    async findErasedAddresses(projectId, hashed) {
      const erased = db().consent.erased;
      return [...new Set(hashed)].filter((h) => erased.has(key(projectId, h)));
    },
    async forgetErasedAddress(projectId, hashed) {
      return db().consent.erased.delete(key(projectId, hashed));
    },
    async getProjectBrand(projectId) {
      const brand = db().consent.brands.get(projectId);
      return brand ? clone(brand) : undefined;
    },
    async putProjectBrand(brand) {
      db().consent.brands.set(brand.projectId, clone(brand));
    },
  };
}

/** Oldest first, then by id. */
function byTime(a: ConsentRecord, b: ConsentRecord): number {
  return a.at.getTime() - b.at.getTime() || compare(a.id, b.id);
}
