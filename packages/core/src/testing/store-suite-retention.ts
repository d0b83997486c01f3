/** Store conformance: the RetentionStore role. */
import { describe, expect, it } from 'vitest';
import { makeIdempotency, testTime } from './store-fixtures.js';
import { addresses, type StoreSuiteContext, seedMailing, seedProject } from './store-suite-helpers.js';

const CONTENT = { subject: 'Kept subject', text: 'Kept text', html: '<p>Kept html</p>' };

/** Registers the tests of pruneDeliveryContent and pruneIdempotent. */
export function describeRetention(ctx: StoreSuiteContext): void {
  describe('pruneDeliveryContent', () => {
    it('clears content written before the cutoff, at most limit rows per call, across projects', async () => {
      const offsets = [-3_000, -2_000, 1_000, -1_000];
      const seeded = await seedMailing(ctx.store, {
        addresses: addresses(5),
        delivery: (_, i) =>
          i === 4
            ? { status: 'sent', updatedAt: testTime(-9_000) }
            : { status: 'sent', content: CONTENT, updatedAt: testTime(offsets[i]) },
      });
      const other = await seedMailing(ctx.store, {
        addresses: addresses(1),
        delivery: () => ({ status: 'sent', content: CONTENT, updatedAt: testTime(-500) }),
      });
      expect(await ctx.store.pruneDeliveryContent(testTime(0), 2)).toBe(2);
      expect(await ctx.store.pruneDeliveryContent(testTime(0), 2)).toBe(2);
      expect(await ctx.store.pruneDeliveryContent(testTime(0), 2)).toBe(0);
      const rows = await ctx.store.listDeliveries(seeded.mailing.id, { limit: 10 });
      expect(rows.map((d) => d.content)).toEqual([null, null, CONTENT, null, null]);
      // The sweep leaves updatedAt alone.
      expect(rows.map((d) => d.updatedAt)).toEqual([...offsets, -9_000].map((o) => testTime(o)));
      expect((await ctx.store.listDeliveries(other.mailing.id, { limit: 1 }))[0]?.content).toBeNull();
      expect(await ctx.store.pruneDeliveryContent(testTime(5_000), 0)).toBe(0);
      expect(await ctx.store.pruneDeliveryContent(testTime(5_000), 10)).toBe(1);
    });
  });

  describe('pruneIdempotent', () => {
    it('deletes expired records of every project, at most limit per call', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      for (const [projectId, key, expires] of [
        [project.id, 'a', 500],
        [project.id, 'b', 1_000],
        [other.id, 'a', 900],
        [project.id, 'live', 1_001],
      ] as const) {
        await ctx.store.beginIdempotent(
          makeIdempotency(projectId, key, { expiresAt: testTime(expires) }),
          testTime(0),
        );
      }
      expect(await ctx.store.pruneIdempotent(testTime(1_000), 2)).toBe(2);
      expect(await ctx.store.pruneIdempotent(testTime(1_000), 2)).toBe(1);
      expect(await ctx.store.pruneIdempotent(testTime(1_000), 2)).toBe(0);
      // The live key is still held; the pruned ones are free (begun at a time they would still be live).
      const live = await ctx.store.beginIdempotent(makeIdempotency(project.id, 'live'), testTime(0));
      expect(live.created).toBe(false);
      const freed = await ctx.store.beginIdempotent(makeIdempotency(project.id, 'b'), testTime(0));
      expect(freed.created).toBe(true);
    });
  });
}
