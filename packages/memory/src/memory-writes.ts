import type { DeliveryRecord, ProfileRecord, ProfileUpsert, ProfileUpsertOptions } from '@mailroom/core';
import { mergeProfile, newProfile } from '@mailroom/core';
import { clone } from './memory-copy.js';
import type { State } from './memory-state.js';
import { key } from './memory-state.js';

/** Inserts deliveries whose (mailingId, address) is new; returns how many. */
export function insertDeliveries(s: State, deliveries: readonly DeliveryRecord[]): number {
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

/**
 * Upserts each row by the core's profile-merge rule (`newProfile`, `mergeProfile`), in order, and adds
 * it to `options.groupId` when set. A profile is written (and its `updatedAt` moved) only when the rule
 * changed it. Returns the traits the merge skipped (the traits cap), summed.
 */
export function upsertProfiles(
  s: State,
  projectId: string,
  rows: readonly ProfileUpsert[],
  options: ProfileUpsertOptions,
  now: Date,
): number {
  const members = options.groupId ? membersOf(s, options.groupId) : undefined;
  let skipped = 0;
  for (const row of rows) {
    const k = key(projectId, row.address);
    const existing = s.profiles.get(k);
    if (!existing) {
      const fields = newProfile(row);
      s.profiles.set(k, {
        ...bareProfile(projectId, row.address, now, 'subscribed'),
        name: fields.name,
        traits: clone(fields.traits),
        labels: [...fields.labels],
      });
    } else {
      const next = mergeProfile(existing, row, options);
      skipped += next.skippedTraits;
      if (next.changed) {
        existing.name = next.name;
        // The merged traits share the row's values: the store keeps its own copy.
        if (next.traits !== existing.traits) existing.traits = clone(next.traits);
        existing.labels = next.labels;
        existing.updatedAt = new Date(now);
      }
    }
    members?.add(row.address);
  }
  return skipped;
}

/** The member set of a group, created empty on first use. */
export function membersOf(s: State, groupId: string): Set<string> {
  let set = s.members.get(groupId);
  if (!set) {
    set = new Set();
    s.members.set(groupId, set);
  }
  return set;
}

/** A profile with nothing but its address and status, as a first sighting creates. */
export function bareProfile(
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
