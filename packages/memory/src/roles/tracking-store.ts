import type { DeliveryTracking, TrackingStore, TrackingSummary } from '@mailroom/core';
import type { State } from '../memory-state.js';
import { writeOutbox } from './event-store.js';

/**
 * `TrackingStore` in memory: link maps, opens (one row per delivery and class) and clicks. Every method
 * checks and writes within one synchronous run, hence atomic against the others in this process.
 */
export function memoryTrackingStore(db: () => State): TrackingStore {
  const tables = () => db().tracking;

  return {
    async saveLinkMap(mailingId, links) {
      const { linkMaps } = tables();
      if (!linkMaps.has(mailingId)) linkMaps.set(mailingId, [...links]);
      return [...(linkMaps.get(mailingId) as string[])];
    },
    async getLinkMap(mailingId) {
      const { linkMaps } = tables();
      const links = linkMaps.get(mailingId);
      return links ? [...links] : undefined;
    },
    async recordTrackingHits(hits) {
      const { opens, clicks } = tables();
      const state = db();
      return hits.map(({ outbox, ...hit }) => {
        if (hit.kind === 'click') {
          clicks.push({ ...hit, at: new Date(hit.at) });
          writeOutbox(state.outbox, outbox);
          return true;
        }
        const key = `${hit.deliveryId}\n${hit.machine}`;
        const row = opens.get(key);
        if (row) {
          row.count++;
          if (hit.at > row.lastAt) row.lastAt = new Date(hit.at);
          return false;
        }
        opens.set(key, {
          mailingId: hit.mailingId,
          machine: hit.machine,
          firstAt: new Date(hit.at),
          lastAt: new Date(hit.at),
          count: 1,
        });
        writeOutbox(state.outbox, outbox);
        return true;
      });
    },
    async trackingSummary(mailingId) {
      const { opens, clicks } = tables();
      const summary: TrackingSummary = {
        opens: { human: 0, machine: 0 },
        clicks: { human: 0, machine: 0 },
        clickTotals: { human: 0, machine: 0 },
        links: [],
      };
      for (const row of opens.values()) {
        if (row.mailingId === mailingId) summary.opens[row.machine ? 'machine' : 'human']++;
      }
      const clickers = { human: new Set<string>(), machine: new Set<string>() };
      const perLink = new Map<number, { human: Set<string>; machine: Set<string> }>();
      for (const c of clicks) {
        if (c.mailingId !== mailingId) continue;
        const cls = c.machine ? 'machine' : 'human';
        summary.clickTotals[cls]++;
        clickers[cls].add(c.deliveryId);
        const index = c.linkIndex ?? 0;
        const link = perLink.get(index) ?? { human: new Set<string>(), machine: new Set<string>() };
        perLink.set(index, link);
        link[cls].add(c.deliveryId);
      }
      summary.clicks = { human: clickers.human.size, machine: clickers.machine.size };
      summary.links = [...perLink]
        .sort(([a], [b]) => a - b)
        .map(([index, link]) => ({ index, human: link.human.size, machine: link.machine.size }));
      return summary;
    },
    async deliveryTracking(deliveryId) {
      const { opens, clicks } = tables();
      const result: DeliveryTracking = { opens: [], clicks: [] };
      for (const machine of [false, true]) {
        const row = opens.get(`${deliveryId}\n${machine}`);
        if (row) {
          result.opens.push({
            machine,
            firstAt: new Date(row.firstAt),
            lastAt: new Date(row.lastAt),
            count: row.count,
          });
        }
      }
      result.clicks = clicks
        .filter((c) => c.deliveryId === deliveryId)
        .sort((a, b) => a.at.getTime() - b.at.getTime())
        .slice(0, 100)
        .map((c) => ({
          linkIndex: c.linkIndex ?? 0,
          url: c.url ?? '',
          machine: c.machine,
          at: new Date(c.at),
        }));
      return result;
    },
  };
}
