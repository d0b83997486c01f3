/** Store conformance: races between two store instances on one backend, as between two processes. */
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../store/store.js';
import { makeBatch, makeDelivery, makeIdempotency, makeSourceJob, testTime } from './store-fixtures.js';
import {
  addresses,
  type StoreSuiteContext,
  seedMailing,
  seedProject,
  sorted,
} from './store-suite-helpers.js';

const LEASE = 60_000;

/** Registers the multi-process tests; `connect` opens a second store on the backend of the first. */
export function describeMultiProcess(
  ctx: StoreSuiteContext,
  connect: ((store: Store) => Promise<Store> | Store) | undefined,
  skipReason: string | undefined,
): void {
  const reason = skipReason ?? (connect ? undefined : 'no `connect` option to open a second store');
  const title = reason ? `multi-process (skipped: ${reason})` : 'multi-process';
  describe(title, () => {
    const opened: Store[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    /** The store of the test, then `count - 1` more on the same backend. */
    async function instances(count: number): Promise<Store[]> {
      expect(
        ctx.store.capabilities.multiProcess,
        'a store with a `connect` option must be multiProcess',
      ).toBe(true);
      const stores = [ctx.store];
      for (let i = 1; i < count; i++) {
        const other = await (connect as (store: Store) => Promise<Store> | Store)(ctx.store);
        opened.push(other);
        await other.init();
        stores.push(other);
      }
      return stores;
    }

    /** Instance `i` of `stores`, round robin. */
    const pick = (stores: Store[], i: number): Store => stores[i % stores.length] as Store;

    it.skipIf(reason !== undefined)(
      'claims from several instances are disjoint and cover every delivery',
      async () => {
        const stores = await instances(3);
        const seeded = await seedMailing(ctx.store, {
          addresses: addresses(300),
          delivery: (_, i) => ({ nextAttemptAt: testTime(-i) }),
        });
        const limit = Math.ceil((2 * 300) / ctx.concurrency);
        const batches = await Promise.all(
          Array.from({ length: ctx.concurrency }, (_, i) =>
            pick(stores, i).claimDeliveries({ now: testTime(0), limit, leaseMs: LEASE }),
          ),
        );
        const ids = batches.flat().map((d) => d.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(sorted(ids)).toEqual(sorted(seeded.deliveries.map((d) => d.id)));
      },
    );

    it.skipIf(reason !== undefined)(
      'commits from several instances give one delivery per address',
      async () => {
        const stores = await instances(3);
        const seeded = await seedMailing(ctx.store);
        const results = await Promise.all(
          Array.from({ length: ctx.concurrency }, (_, i) => {
            const batch = makeBatch(seeded.mailing.id, { seq: i + 2 });
            return pick(stores, i).commitBatch({
              target: {
                mailingId: seeded.mailing.id,
                allowStatus: ['queued', 'sending'],
                setStatus: 'sending',
              },
              batch,
              deliveries: addresses(50, i * 10).map((a) => makeDelivery(seeded.mailing, batch, a)),
              profiles: addresses(50, i * 10).map((address) => ({ address })),
              profileOptions: { onExistingTrait: 'preserve', onExistingProfile: 'preserve' },
              sourceJobs: [],
              now: testTime(i),
            });
          }),
        );
        const expected = 50 + (ctx.concurrency - 1) * 10;
        expect(results.reduce((sum, r) => sum + r.inserted, 0)).toBe(expected);
        const listed = await ctx.store.listDeliveries(seeded.mailing.id, { limit: 10_000 });
        expect(new Set(listed.map((d) => d.address)).size).toBe(expected);
        expect(listed).toHaveLength(expected);
        expect((await ctx.store.getMailingById(seeded.mailing.id))?.batchCount).toBe(1 + ctx.concurrency);
      },
    );

    it.skipIf(reason !== undefined)(
      'one source job, one idempotency key and one status change win across instances',
      async () => {
        const stores = await instances(3);
        const seeded = await seedMailing(ctx.store, { sourceJobs: (m, b) => [makeSourceJob(m, b)] });
        const { project } = await seedProject(ctx.store);
        const n = ctx.concurrency;
        const jobs = await Promise.all(
          Array.from({ length: n }, (_, i) =>
            pick(stores, i).claimSourceJob({ now: testTime(0), leaseMs: LEASE }),
          ),
        );
        expect(jobs.filter((j) => j !== undefined)).toHaveLength(1);
        const begun = await Promise.all(
          Array.from({ length: n }, (_, i) =>
            pick(stores, i).beginIdempotent(makeIdempotency(project.id, 'k'), testTime()),
          ),
        );
        expect(begun.filter((b) => b.created)).toHaveLength(1);
        const changed = await Promise.all(
          Array.from({ length: n }, (_, i) =>
            pick(stores, i).setMailingStatus(seeded.mailing.id, ['queued'], 'cancelled', testTime(1)),
          ),
        );
        expect(changed.filter(Boolean)).toHaveLength(1);
      },
    );
  });
}
