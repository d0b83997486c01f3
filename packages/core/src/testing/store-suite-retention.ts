/** Store conformance: moving scheduled mailings, retention sweeps and installation settings. */
import { describe, expect, it } from 'vitest';
import type { DeliveryRecord } from '../records.js';
import { makeIdempotency, testTime } from './store-fixtures.js';
import { addresses, type StoreSuiteContext, seedMailing, seedProject } from './store-suite-helpers.js';

const CONTENT = { subject: 'Kept subject', text: 'Kept text', html: '<p>Kept html</p>' };

/** Registers the tests of rescheduleMailing, firstSentAt, pruneDeliveryContent, pruneIdempotent, ensureSetting. */
export function describeSchedule(ctx: StoreSuiteContext): void {
  describe('rescheduleMailing', () => {
    /** A scheduled mailing: three never-attempted deliveries, a retry and a sent one. */
    async function seedScheduled() {
      return seedMailing(ctx.store, {
        mailing: {
          status: 'scheduled',
          options: { acquiringAudience: null, scheduleFor: testTime(10_000), storeContent: false },
        },
        addresses: addresses(5),
        delivery: (_, i): Partial<DeliveryRecord> => {
          if (i === 3) return { nextAttemptAt: testTime(500), attempts: 2 };
          if (i === 4) return { status: 'sent', sentAt: testTime(1), nextAttemptAt: testTime(10_000) };
          return { nextAttemptAt: testTime(10_000) };
        },
      });
    }

    it('moves the never-attempted queued deliveries and the mailing, and nothing else', async () => {
      const seeded = await seedScheduled();
      const other = await seedMailing(ctx.store, {
        mailing: { status: 'scheduled' },
        addresses: addresses(1),
        delivery: () => ({ nextAttemptAt: testTime(10_000) }),
      });
      expect(
        await ctx.store.rescheduleMailing(seeded.mailing.id, testTime(50_000), 'scheduled', testTime(100)),
      ).toBe(true);
      const mailing = await ctx.store.getMailingById(seeded.mailing.id);
      expect(mailing).toMatchObject({ status: 'scheduled', updatedAt: testTime(100) });
      expect(mailing?.options).toEqual({
        acquiringAudience: null,
        scheduleFor: testTime(50_000),
        storeContent: false,
      });
      const rows = await ctx.store.listDeliveries(seeded.mailing.id, { limit: 10 });
      expect(rows.map((d) => d.nextAttemptAt)).toEqual([
        testTime(50_000),
        testTime(50_000),
        testTime(50_000),
        testTime(500),
        testTime(10_000),
      ]);
      expect(rows.map((d) => d.status)).toEqual(['queued', 'queued', 'queued', 'queued', 'sent']);
      const untouched = await ctx.store.listDeliveries(other.mailing.id, { limit: 10 });
      expect(untouched[0]?.nextAttemptAt).toEqual(testTime(10_000));
      // Only the retry is due before the new time (the other mailing kept its time).
      const claimed = await ctx.store.claimDeliveries({ now: testTime(20_000), limit: 10, leaseMs: 1_000 });
      expect(claimed.filter((d) => d.mailingId === seeded.mailing.id).map((d) => d.address)).toEqual([
        addresses(1, 3)[0],
      ]);
      expect(claimed.filter((d) => d.mailingId === other.mailing.id)).toHaveLength(1);
    });

    it('may set the status to queued; refuses anything not scheduled and writes nothing', async () => {
      const seeded = await seedScheduled();
      expect(
        await ctx.store.rescheduleMailing(seeded.mailing.id, testTime(-5), 'queued', testTime(100)),
      ).toBe(true);
      const mailing = await ctx.store.getMailingById(seeded.mailing.id);
      expect(mailing?.status).toBe('queued');
      expect(mailing?.options.scheduleFor).toEqual(testTime(-5));
      // No longer scheduled: refused.
      expect(
        await ctx.store.rescheduleMailing(seeded.mailing.id, testTime(90_000), 'scheduled', testTime(200)),
      ).toBe(false);
      expect((await ctx.store.getMailingById(seeded.mailing.id))?.options.scheduleFor).toEqual(testTime(-5));
      const first = await ctx.store.findDelivery(seeded.mailing.id, addresses(1)[0] ?? '');
      expect(first?.nextAttemptAt).toEqual(testTime(-5));
      for (const status of ['sending', 'cancelled', 'completed'] as const) {
        const s = await seedMailing(ctx.store, {
          mailing: { status },
          addresses: addresses(1),
          delivery: () => ({ nextAttemptAt: testTime(7) }),
        });
        expect(
          await ctx.store.rescheduleMailing(s.mailing.id, testTime(9_000), 'scheduled', testTime(1)),
        ).toBe(false);
        expect((await ctx.store.getMailingById(s.mailing.id))?.status).toBe(status);
        expect((await ctx.store.listDeliveries(s.mailing.id, { limit: 1 }))[0]?.nextAttemptAt).toEqual(
          testTime(7),
        );
      }
      expect(await ctx.store.rescheduleMailing('mlg_missing', testTime(1), 'scheduled', testTime(1))).toBe(
        false,
      );
    });

    it('racing a cancel (setMailingStatus from scheduled), exactly one of them wins', async () => {
      const seeded = await seedScheduled();
      const n = Math.max(2, Math.floor(ctx.concurrency / 2));
      const results = await Promise.all(
        Array.from({ length: n * 2 }, (_, i) =>
          i % 2 === 0
            ? ctx.store.rescheduleMailing(seeded.mailing.id, testTime(1), 'queued', testTime(i))
            : ctx.store.setMailingStatus(seeded.mailing.id, ['scheduled'], 'cancelled', testTime(i)),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const mailing = await ctx.store.getMailingById(seeded.mailing.id);
      const rescheduled = results.findIndex(Boolean) % 2 === 0;
      expect(mailing?.status).toBe(rescheduled ? 'queued' : 'cancelled');
      expect(mailing?.options.scheduleFor).toEqual(rescheduled ? testTime(1) : testTime(10_000));
    });
  });

  describe('firstSentAt', () => {
    it('is the earliest sentAt of the mailing, undefined when nothing was sent', async () => {
      const seeded = await seedMailing(ctx.store, {
        addresses: addresses(4),
        delivery: (_, i) => (i === 3 ? {} : { status: 'sent', sentAt: testTime([3_000, 1_234, 2_000][i]) }),
      });
      await seedMailing(ctx.store, {
        addresses: addresses(1),
        delivery: () => ({ status: 'sent', sentAt: testTime(5) }),
      });
      expect(await ctx.store.firstSentAt(seeded.mailing.id)).toEqual(testTime(1_234));
      const unsent = await seedMailing(ctx.store, { addresses: addresses(2) });
      expect(await ctx.store.firstSentAt(unsent.mailing.id)).toBeUndefined();
      expect(await ctx.store.firstSentAt('mlg_missing')).toBeUndefined();
    });
  });

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

  describe('ensureSetting', () => {
    it('stores the first value and returns it ever after', async () => {
      expect(await ctx.store.ensureSetting('unsubscribe-secret', 'first', testTime())).toBe('first');
      expect(await ctx.store.ensureSetting('unsubscribe-secret', 'second', testTime(1))).toBe('first');
      expect(await ctx.store.ensureSetting('other', 'x'.repeat(2_000), testTime())).toBe('x'.repeat(2_000));
    });

    it('of concurrent calls with one name, every one returns the same value', async () => {
      const values = await Promise.all(
        Array.from({ length: ctx.concurrency }, (_, i) =>
          ctx.store.ensureSetting('race', `v${i}`, testTime(i)),
        ),
      );
      expect(new Set(values).size).toBe(1);
      expect(await ctx.store.ensureSetting('race', 'late', testTime())).toBe(values[0]);
    });
  });
}
