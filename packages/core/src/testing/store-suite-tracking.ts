/**
 * The Store conformance kit, tracking: link maps, hits (opens once per delivery and class, every click)
 * and the counts the broadcast views show.
 */
import { describe, expect, it } from 'vitest';
import type { TrackingHit } from '../store/store.js';
import { testId, testTime } from './store-fixtures.js';
import { addresses, addressOf, type StoreSuiteContext, seedMailing } from './store-suite-helpers.js';

/** A hit of the first delivery of `seeded`, with `overrides`. */
function hitOf(
  seeded: { project: { id: string }; mailing: { id: string }; deliveries: Array<{ id: string }> },
  overrides: Partial<TrackingHit> = {},
  delivery = 0,
): TrackingHit {
  return {
    id: testId('hit'),
    kind: 'open',
    projectId: seeded.project.id,
    mailingId: seeded.mailing.id,
    deliveryId: (seeded.deliveries[delivery] as { id: string }).id,
    linkIndex: null,
    url: null,
    machine: false,
    at: testTime(1000),
    ...overrides,
  };
}

/** Registers the tracking tests. */
export function describeTracking(ctx: StoreSuiteContext): void {
  describe('tracking', () => {
    it('keeps the first link map of a mailing, whoever races', async () => {
      const { mailing } = await seedMailing(ctx.store);
      expect(await ctx.store.getLinkMap(mailing.id)).toBeUndefined();
      const maps = Array.from({ length: ctx.concurrency }, (_, i) => [
        `https://a.test/${i}`,
        'https://b.test/?x=1&amp;y=2',
      ]);
      const results = await Promise.all(
        maps.map((links) => ctx.store.saveLinkMap(mailing.id, links, testTime())),
      );
      const kept = results[0] as string[];
      expect(maps).toContainEqual(kept);
      for (const r of results) expect(r).toEqual(kept);
      expect(await ctx.store.getLinkMap(mailing.id)).toEqual(kept);
      // A mailing without links keeps an empty map, distinct from none.
      const other = await seedMailing(ctx.store);
      expect(await ctx.store.saveLinkMap(other.mailing.id, [], testTime())).toEqual([]);
      expect(await ctx.store.getLinkMap(other.mailing.id)).toEqual([]);
    });

    it('reports an open new once per delivery and class, and every click new', async () => {
      const seeded = await seedMailing(ctx.store, { addresses: addresses(2) });
      const fresh = await ctx.store.recordTrackingHits([
        hitOf(seeded),
        hitOf(seeded, { at: testTime(2000) }),
        hitOf(seeded, { machine: true }),
        hitOf(seeded, { kind: 'click', linkIndex: 0, url: 'https://a.test/' }),
        hitOf(seeded, { kind: 'click', linkIndex: 0, url: 'https://a.test/' }),
      ]);
      expect(fresh).toEqual([true, false, true, true, true]);
      expect(await ctx.store.recordTrackingHits([hitOf(seeded, { at: testTime(3000) })])).toEqual([false]);
      expect(await ctx.store.recordTrackingHits([])).toEqual([]);
      const tracking = await ctx.store.deliveryTracking((seeded.deliveries[0] as { id: string }).id);
      expect(tracking.opens).toEqual([
        { machine: false, firstAt: testTime(1000), lastAt: testTime(3000), count: 3 },
        { machine: true, firstAt: testTime(1000), lastAt: testTime(1000), count: 1 },
      ]);
      expect(tracking.clicks).toEqual([
        { linkIndex: 0, url: 'https://a.test/', machine: false, at: testTime(1000) },
        { linkIndex: 0, url: 'https://a.test/', machine: false, at: testTime(1000) },
      ]);
      expect(await ctx.store.deliveryTracking((seeded.deliveries[1] as { id: string }).id)).toEqual({
        opens: [],
        clicks: [],
      });
    });

    it('writes a hit’s events with it, and none for a hit that is not new', async () => {
      const seeded = await seedMailing(ctx.store, { addresses: addresses(1) });
      const outbox = (type: 'email.opened' | 'email.clicked') => {
        const id = testId('evt');
        return {
          events: [
            {
              id,
              projectId: seeded.project.id,
              type,
              mailingRef: seeded.mailing.ref,
              deliveryId: (seeded.deliveries[0] as { id: string }).id,
              address: addressOf(0),
              data: { event_id: id, project_id: seeded.project.id, machine: false },
              createdAt: testTime(1000),
            },
          ],
          messages: [],
        };
      };
      await ctx.store.recordTrackingHits([
        hitOf(seeded, { outbox: outbox('email.opened') }),
        hitOf(seeded, { outbox: outbox('email.opened') }),
        hitOf(seeded, {
          kind: 'click',
          linkIndex: 0,
          url: 'https://a.test/',
          outbox: outbox('email.clicked'),
        }),
      ]);
      const events = await ctx.store.listEvents(seeded.project.id, {}, { limit: 10 });
      expect(events.map((e) => e.type).sort()).toEqual(['email.clicked', 'email.opened']);
    });

    it('reports exactly one of racing first opens new', async () => {
      const seeded = await seedMailing(ctx.store, { addresses: addresses(1) });
      const results = await Promise.all(
        Array.from({ length: ctx.concurrency }, () => ctx.store.recordTrackingHits([hitOf(seeded)])),
      );
      expect(results.flat().filter(Boolean)).toHaveLength(1);
      const [open] = (await ctx.store.deliveryTracking((seeded.deliveries[0] as { id: string }).id)).opens;
      expect(open?.count).toBe(ctx.concurrency);
    });

    it('counts a mailing’s unique opens and clicks, people and machines apart, per link', async () => {
      const seeded = await seedMailing(ctx.store, { addresses: addresses(3) });
      const other = await seedMailing(ctx.store, { addresses: addresses(1) });
      const click = (linkIndex: number, machine: boolean, delivery: number) =>
        hitOf(
          seeded,
          { id: testId('clk'), kind: 'click', linkIndex, url: `https://l.test/${linkIndex}`, machine },
          delivery,
        );
      await ctx.store.recordTrackingHits([
        hitOf(seeded, {}, 0),
        hitOf(seeded, {}, 0),
        hitOf(seeded, {}, 1),
        hitOf(seeded, { machine: true }, 1),
        hitOf(seeded, { machine: true }, 2),
        click(0, false, 0),
        click(0, false, 0),
        click(1, false, 0),
        click(0, false, 1),
        click(0, true, 2),
        click(1, true, 2),
        hitOf(other),
        hitOf(other, { kind: 'click', linkIndex: 0, url: 'https://o.test/' }),
      ]);
      expect(await ctx.store.trackingSummary(seeded.mailing.id)).toEqual({
        opens: { human: 2, machine: 2 },
        clicks: { human: 2, machine: 1 },
        clickTotals: { human: 4, machine: 2 },
        links: [
          { index: 0, human: 2, machine: 1 },
          { index: 1, human: 1, machine: 1 },
        ],
      });
      const none = await seedMailing(ctx.store);
      expect(await ctx.store.trackingSummary(none.mailing.id)).toEqual({
        opens: { human: 0, machine: 0 },
        clicks: { human: 0, machine: 0 },
        clickTotals: { human: 0, machine: 0 },
        links: [],
      });
    });
  });
}
