import type { AudienceAdminStore, ErasureCounts } from '@mailroom/core';
import { ERASED_ADDRESS, erasedDeliveryAddress, foldAddress, scrubAddress, scrubText } from '@mailroom/core';
import { clone } from '../memory-copy.js';
import type { State } from '../memory-state.js';
import { compare, conflict, exists, key } from '../memory-state.js';

/** `AudienceAdminStore` in memory: each method checks and writes within one synchronous run (atomic). */
export function memoryAudienceAdminStore(db: () => State): AudienceAdminStore {
  /** The ids of the project's groups. */
  const groupIds = (s: State, projectId: string): string[] =>
    [...s.groups.values()].filter((g) => g.projectId === projectId).map((g) => g.id);

  return {
    async listProfiles(projectId, filter, page) {
      const s = db();
      const after = page.after ?? null;
      const prefix = filter.prefix ?? '';
      return [...s.profiles.values()]
        .filter(
          (p) =>
            p.projectId === projectId &&
            (after === null || compare(p.address, after) > 0) &&
            p.address.startsWith(prefix) &&
            (filter.label === undefined || p.labels.includes(filter.label)),
        )
        .sort((a, b) => compare(a.address, b.address))
        .slice(0, page.limit)
        .map(clone);
    },

    async updateProfile(projectId, address, change, now) {
      const s = db();
      const k = key(projectId, address);
      const profile = s.profiles.get(k);
      if (!profile) return undefined;
      const moving = change.address !== undefined && change.address !== address;
      const target = moving ? (change.address as string) : address;
      if (moving && s.profiles.has(key(projectId, target))) throw exists(`profile ${target}`, projectId);
      const next = {
        ...profile,
        address: target,
        ...(change.name !== undefined ? { name: change.name } : {}),
        ...(change.traits !== undefined ? { traits: clone(change.traits) } : {}),
        ...(change.labels !== undefined ? { labels: [...change.labels] } : {}),
        ...(change.status !== undefined ? { status: change.status } : {}),
        updatedAt: new Date(now),
      };
      if (moving) {
        s.profiles.delete(k);
        for (const id of groupIds(s, projectId)) {
          const members = s.members.get(id);
          if (members?.delete(address)) members.add(target);
        }
      }
      s.profiles.set(key(projectId, target), next);
      return clone(next);
    },

    async deleteGroup(projectId, ref) {
      const s = db();
      const k = key(projectId, ref);
      const id = s.groupIdByRef.get(k);
      if (id === undefined) return false;
      s.groupIdByRef.delete(k);
      s.groups.delete(id);
      s.members.delete(id);
      return true;
    },

    async eraseAddress(projectId, address) {
      const s = db();
      const counts: ErasureCounts = {
        profiles: s.profiles.delete(key(projectId, address)) ? 1 : 0,
        memberships: 0,
        suppressions: s.suppressions.delete(key(projectId, foldAddress(address))) ? 1 : 0,
        deliveries: 0,
        events: 0,
        webhookMessages: 0,
        signals: 0,
        receivedMessages: 0,
      };
      s.softBounces.delete(key(projectId, address));
      for (const id of groupIds(s, projectId)) if (s.members.get(id)?.delete(address)) counts.memberships++;
      const deliveryIds = new Set<string>();
      for (const mailing of s.mailings.values()) {
        if (mailing.projectId !== projectId) continue;
        const k = key(mailing.id, address);
        const id = s.deliveryIdByAddress.get(k);
        const delivery = id === undefined ? undefined : s.deliveries.get(id);
        if (!delivery) continue;
        const erased = erasedDeliveryAddress(delivery.id);
        s.deliveryIdByAddress.delete(k);
        s.deliveryIdByAddress.set(key(mailing.id, erased), delivery.id);
        Object.assign(delivery, {
          address: erased,
          name: '',
          variables: {},
          traits: {},
          content: null,
          lastResponse: null,
          lastError: null,
        });
        deliveryIds.add(delivery.id);
        counts.deliveries++;
      }
      const eventIds = new Set<string>();
      for (const event of s.outbox.events.values()) {
        if (event.projectId !== projectId) continue;
        if (event.address !== address && !(event.deliveryId && deliveryIds.has(event.deliveryId))) continue;
        event.address = null;
        event.data = scrubAddress(event.data, address);
        eventIds.add(event.id);
        counts.events++;
      }
      for (const message of s.outbox.messages.values()) {
        if (message.projectId !== projectId || !eventIds.has(message.eventId)) continue;
        message.payload = scrubText(message.payload, address);
        counts.webhookMessages++;
      }
      // A click's URL may carry the address (a link with the recipient's address in it).
      for (const click of s.tracking.clicks) {
        if (deliveryIds.has(click.deliveryId) && click.url !== null)
          click.url = scrubText(click.url, address);
      }
      for (const signal of s.inboundSignals.values()) {
        if (!deliveryIds.has(signal.deliveryId)) continue;
        Object.assign(signal, {
          address: ERASED_ADDRESS,
          diagnostic: null,
          reportedAddress: null,
          reportedMessageId: null,
        });
        counts.signals++;
      }
      const from = foldAddress(address);
      for (const message of [...s.receiving.messages.values()]) {
        if (message.projectId !== projectId || message.fromAddress !== from) continue;
        s.receiving.messages.delete(message.id);
        s.receiving.raw.delete(message.id);
        counts.receivedMessages++;
      }
      return counts;
    },

    async insertImportJob(job) {
      const s = db();
      if (s.sourceJobs.has(job.id)) throw conflict(`source job ${job.id} already exists`);
      s.sourceJobs.set(job.id, clone(job));
    },
  };
}
