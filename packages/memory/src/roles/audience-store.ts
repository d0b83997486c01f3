import type { AudienceStore } from '@mailroom/core';
import { foldAddress } from '@mailroom/core';
import { clone, cloneMaybe } from '../memory-copy.js';
import type { State } from '../memory-state.js';
import { compare, exists, key } from '../memory-state.js';
import { bareProfile } from '../memory-writes.js';
import { writeOutbox } from './event-store.js';

/** `AudienceStore` in memory. Audience groups, profiles and suppressions; every method checks and writes within one synchronous run. */
export function memoryAudienceStore(db: () => State): AudienceStore {
  return {
    async createGroup(group) {
      const s = db();
      const k = key(group.projectId, group.ref);
      if (s.groupIdByRef.has(k) || s.groups.has(group.id))
        throw exists(`audience group ${group.ref}`, group.projectId);
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
    async findUnsubscribed(projectId, addresses) {
      const s = db();
      const found = new Set<string>();
      for (const address of addresses) {
        const folded = foldAddress(address);
        if (found.has(folded)) continue;
        for (const k of s.profiles.byFolded.get(key(projectId, folded)) ?? []) {
          if (s.profiles.get(k)?.status === 'unsubscribed') found.add(folded);
        }
      }
      return [...found];
    },
    async setProfileStatus(projectId, address, status, now, outbox) {
      const s = db();
      writeOutbox(s.outbox, outbox);
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
      const address = foldAddress(suppression.address);
      db().suppressions.set(key(suppression.projectId, address), { ...clone(suppression), address });
    },
    async removeSuppression(projectId, address) {
      return db().suppressions.delete(key(projectId, foldAddress(address)));
    },
    async findSuppressed(projectId, addresses) {
      const s = db();
      const folded = new Set(addresses.map(foldAddress));
      return [...folded].flatMap((address) => {
        const row = s.suppressions.get(key(projectId, address));
        return row ? [clone(row)] : [];
      });
    },
  };
}
