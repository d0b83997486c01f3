/** Store conformance: the SourceJobStore role. */
import { describe, expect, it } from 'vitest';
import type { SourceJobRecord } from '../store/records.js';
import { makeDelivery, makeGroup, makeSourceJob, richVariables, testTime } from './store-fixtures.js';
import {
  addresses,
  PRESERVE,
  type StoreSuiteContext,
  seedMailing,
  seedProject,
  withoutUpdatedAt,
} from './store-suite-helpers.js';

const LEASE = 60_000;

/** Registers the tests of source jobs. */
export function describeSources(ctx: StoreSuiteContext): void {
  describe('source jobs', () => {
    it('claimSourceJob takes a pending job: running, leased, token + 1', async () => {
      expect(await ctx.store.claimSourceJob({ now: testTime(0), leaseMs: LEASE })).toBeUndefined();
      const made: SourceJobRecord[] = [];
      const seeded = await seedMailing(ctx.store, {
        sourceJobs: (mailing, batch) => {
          made.push(makeSourceJob(mailing, batch, { leaseToken: 4, config: { nested: richVariables() } }));
          return made;
        },
      });
      const claimed = await ctx.store.claimSourceJob({ now: testTime(100), leaseMs: LEASE });
      const [job] = made;
      if (!job) throw new Error('expected a job');
      const expected = {
        ...withoutUpdatedAt(job),
        status: 'running',
        leaseToken: 5,
        leaseExpiresAt: testTime(100 + LEASE),
      };
      expect(claimed).toMatchObject(expected);
      expect(await ctx.store.listSourceJobs(seeded.mailing.id)).toMatchObject([expected]);
    });

    it('a running job is claimed again only once its lease expired; done and failed jobs never', async () => {
      await seedMailing(ctx.store, {
        sourceJobs: (mailing, batch) => [
          makeSourceJob(mailing, batch),
          makeSourceJob(mailing, batch, { status: 'done' }),
          makeSourceJob(mailing, batch, { status: 'failed', error: 'boom' }),
        ],
      });
      const first = await ctx.store.claimSourceJob({ now: testTime(0), leaseMs: LEASE });
      expect(first?.leaseToken).toBe(1);
      expect(await ctx.store.claimSourceJob({ now: testTime(LEASE - 1), leaseMs: LEASE })).toBeUndefined();
      const again = await ctx.store.claimSourceJob({ now: testTime(LEASE), leaseMs: LEASE });
      expect(again).toMatchObject({
        id: first?.id,
        status: 'running',
        leaseToken: 2,
        leaseExpiresAt: testTime(2 * LEASE),
      });
    });

    it('of concurrent claimers, exactly one gets a job', async () => {
      await seedMailing(ctx.store, { sourceJobs: (mailing, batch) => [makeSourceJob(mailing, batch)] });
      const results = await Promise.all(
        Array.from({ length: ctx.concurrency }, () =>
          ctx.store.claimSourceJob({ now: testTime(0), leaseMs: LEASE }),
        ),
      );
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    });

    it('commitSourcePage appends deliveries, upserts profiles, patches and extends the lease', async () => {
      const { project } = await seedProject(ctx.store);
      const group = makeGroup(project.id, 'from-csv');
      await ctx.store.createGroup(group);
      const seeded = await seedMailing(ctx.store, {
        project,
        addresses: addresses(2),
        sourceJobs: (mailing, batch) => [makeSourceJob(mailing, batch, { kind: 'csv' })],
      });
      const job = await ctx.store.claimSourceJob({ now: testTime(0), leaseMs: LEASE });
      if (!job) throw new Error('expected a job');
      const deliveries = addresses(4, 1).map((a) =>
        makeDelivery(seeded.mailing, seeded.batch, a, { name: 'from source' }),
      );
      const patch = {
        checkpoint: { offset: 1_048_576, etag: '"abc"', last: 'ü@example.com', parts: [1, [2, null]] },
        rowsDone: 4,
        rowsFailed: 1,
        rowErrors: [{ line: 3, reason: 'Invalid address «x»' }],
      };
      const result = await ctx.store.commitSourcePage(job.id, job.leaseToken, {
        deliveries,
        profiles: [{ address: 'p@example.com', labels: ['csv'] }],
        profileOptions: { ...PRESERVE, groupId: group.id },
        patch,
        leaseUntil: testTime(3 * LEASE + 1),
        now: testTime(50),
      });
      expect(result).toEqual({ inserted: 3 });
      expect(await ctx.store.findDelivery(seeded.mailing.id, addresses(1, 1)[0] ?? '')).toEqual(
        seeded.deliveries[1],
      );
      expect(await ctx.store.getDelivery(deliveries[3]?.id ?? '')).toEqual(deliveries[3]);
      expect(await ctx.store.getProfile(project.id, 'p@example.com')).toMatchObject({ labels: ['csv'] });
      expect(await ctx.store.listGroups(project.id)).toEqual([{ ...group, members: 1 }]);
      const [stored] = await ctx.store.listSourceJobs(seeded.mailing.id);
      expect(stored).toEqual({
        ...job,
        ...patch,
        leaseExpiresAt: testTime(3 * LEASE + 1),
        updatedAt: testTime(50),
      });
      const done = await ctx.store.commitSourcePage(job.id, job.leaseToken, {
        deliveries: [],
        profiles: [],
        profileOptions: PRESERVE,
        patch: { status: 'done' },
        leaseUntil: testTime(4 * LEASE),
        now: testTime(60),
      });
      expect(done).toEqual({ inserted: 0 });
      const [finished] = await ctx.store.listSourceJobs(seeded.mailing.id);
      expect(finished).toMatchObject({ status: 'done', checkpoint: patch.checkpoint, rowsDone: 4 });
    });

    it('commitSourcePage with a stale token writes nothing', async () => {
      const seeded = await seedMailing(ctx.store, {
        sourceJobs: (mailing, batch) => [makeSourceJob(mailing, batch)],
      });
      const first = await ctx.store.claimSourceJob({ now: testTime(0), leaseMs: LEASE });
      const second = await ctx.store.claimSourceJob({ now: testTime(LEASE), leaseMs: LEASE });
      if (!first || !second) throw new Error('expected two claims');
      const delivery = makeDelivery(seeded.mailing, seeded.batch, 'late@example.com');
      const result = await ctx.store.commitSourcePage(first.id, first.leaseToken, {
        deliveries: [delivery],
        profiles: [{ address: 'late@example.com' }],
        profileOptions: PRESERVE,
        patch: { status: 'failed', error: 'stale' },
        leaseUntil: testTime(10 * LEASE),
        now: testTime(LEASE + 1),
      });
      expect(result).toBeUndefined();
      expect(await ctx.store.getDelivery(delivery.id)).toBeUndefined();
      expect(await ctx.store.getProfile(seeded.project.id, 'late@example.com')).toBeUndefined();
      expect(await ctx.store.listSourceJobs(seeded.mailing.id)).toEqual([second]);
    });

    it('commitSourcePage with `after` writes pages in order, and none after a page that failed', async () => {
      const seeded = await seedMailing(ctx.store, {
        sourceJobs: (mailing, batch) => [makeSourceJob(mailing, batch, { kind: 'csv' })],
      });
      const job = await ctx.store.claimSourceJob({ now: testTime(0), leaseMs: LEASE });
      if (!job) throw new Error('expected a job');
      const page = (n: number, first: number) => ({
        deliveries: addresses(3, first).map((a) => makeDelivery(seeded.mailing, seeded.batch, a)),
        profiles: addresses(3, first).map((address) => ({ address, traits: { page: String(n) } })),
        profileOptions: PRESERVE,
        patch: { rowsDone: 3 * n, checkpoint: { page: n } },
        leaseUntil: testTime(LEASE + n),
        now: testTime(n),
      });
      // Page 2 is handed over before page 1 has settled; it must land after it.
      const one = ctx.store.commitSourcePage(job.id, job.leaseToken, page(1, 10));
      const two = ctx.store.commitSourcePage(job.id, job.leaseToken, page(2, 20), { after: one });
      expect(await two).toEqual({ inserted: 3 });
      expect(await one).toEqual({ inserted: 3 });
      expect((await ctx.store.listSourceJobs(seeded.mailing.id))[0]).toMatchObject({
        rowsDone: 6,
        checkpoint: { page: 2 },
      });

      // A page after one whose commit failed is not written: it fails with that error.
      let fail: (error: Error) => void = () => undefined;
      const failed = new Promise<never>((_, reject) => {
        fail = reject;
      });
      failed.catch(() => undefined);
      const three = ctx.store.commitSourcePage(job.id, job.leaseToken, page(3, 30), { after: failed });
      const boom = new Error('page 2 failed');
      fail(boom);
      await expect(three).rejects.toThrow('page 2 failed');
      for (const address of addresses(3, 30)) {
        expect(await ctx.store.findDelivery(seeded.mailing.id, address)).toBeUndefined();
        expect(await ctx.store.getProfile(seeded.project.id, address)).toBeUndefined();
      }
      expect((await ctx.store.listSourceJobs(seeded.mailing.id))[0]).toMatchObject({
        rowsDone: 6,
        checkpoint: { page: 2 },
      });
    });

    it('listSourceJobs lists the jobs of one mailing, oldest first', async () => {
      const jobs: SourceJobRecord[] = [];
      const seeded = await seedMailing(ctx.store, {
        sourceJobs: (mailing, batch) => {
          jobs.push(
            ...[3, 1, 2].map((i) => makeSourceJob(mailing, batch, { createdAt: testTime(i * 1_000) })),
          );
          return jobs;
        },
      });
      await seedMailing(ctx.store, { sourceJobs: (mailing, batch) => [makeSourceJob(mailing, batch)] });
      expect(await ctx.store.listSourceJobs(seeded.mailing.id)).toEqual([jobs[1], jobs[2], jobs[0]]);
      expect(await ctx.store.listSourceJobs('mlg_missing')).toEqual([]);
    });
  });
}
