/** Store conformance: the MailingStore role (committing batches, the life of a mailing, its deliveries read). */
import { describe, expect, it } from 'vitest';
import type { DeliveryRecord, DeliveryStatus } from '../store/records.js';
import type { BatchWrite } from '../store/store.js';
import {
  makeBatch,
  makeDelivery,
  makeGroup,
  makeMailing,
  makeSourceJob,
  richVariables,
  testTime,
} from './store-fixtures.js';
import {
  addresses,
  completeOne,
  expectStoreError,
  PRESERVE,
  type SeededMailing,
  type StoreSuiteContext,
  seedMailing,
  seedProject,
  sorted,
} from './store-suite-helpers.js';

/** A write appending `list` to the seeded mailing as batch `seq`. */
function appendWrite(
  seeded: SeededMailing,
  list: string[],
  seq: number,
  extra: Partial<BatchWrite> = {},
): BatchWrite {
  const batch = makeBatch(seeded.mailing.id, { seq, recipientCount: list.length });
  return {
    target: {
      mailingId: seeded.mailing.id,
      allowStatus: ['queued', 'sending', 'completed'],
      setStatus: 'sending',
    },
    batch,
    deliveries: list.map((address) => makeDelivery(seeded.mailing, batch, address, { name: `batch ${seq}` })),
    profiles: [],
    profileOptions: PRESERVE,
    sourceJobs: [],
    now: testTime(seq * 1_000),
    ...extra,
  };
}

/** Registers the tests of commitBatch, mailings, rescheduling and reading deliveries. */
export function describeMailings(ctx: StoreSuiteContext): void {
  describeCommitBatches(ctx);
  describe('commitBatch', () => {
    it('creates the mailing with batchCount 1, its deliveries, profiles and source jobs', async () => {
      const { project } = await seedProject(ctx.store);
      const group = makeGroup(project.id, 'acquired');
      await ctx.store.createGroup(group);
      const mailing = makeMailing(project.id, {
        sender: { address: 'news@example.com', name: 'Nëws ✉' },
        replyTo: 'reply@example.com',
        content: {
          subject: 'Grüße {{ name }} — 你好',
          preheader: 'Pre 👀',
          html: '<p>{{ greeting }}</p>',
          text: 'Text {{ greeting }}',
          variables: richVariables(),
          templateRef: 'welcome',
          templateVersion: 3,
        },
        attachments: [
          { filename: 'a.txt', contentType: 'text/plain', contentBase64: 'aGVsbG8=' },
          { filename: 'b.pdf', contentType: 'application/pdf', url: 'https://files.example.com/b.pdf?x=1' },
        ],
        invitation: {
          title: 'Launch 🚀',
          startDate: '2030-02-01T10:00:00Z',
          endDate: '2030-02-01T11:00:00Z',
          location: 'Zürich',
        },
        options: { acquiringAudience: 'acquired', scheduleFor: testTime(3_600_123), storeContent: true },
        sandbox: true,
        createdAt: testTime(11),
        updatedAt: testTime(11),
      });
      const batch = makeBatch(mailing.id, { recipientCount: 2, createdAt: testTime(11) });
      const deliveries = [
        makeDelivery(mailing, batch, 'a@example.com', {
          name: 'Ånne',
          variables: richVariables(),
          traits: { firstName: 'Ånne', tags: ['x'] },
          nextAttemptAt: testTime(3_600_123),
        }),
        makeDelivery(mailing, batch, 'b@example.com'),
      ];
      const job = makeSourceJob(mailing, batch, {
        kind: 'csv',
        config: {
          url: 'https://files.example.com/list.csv',
          label: 'csv-ü',
          columnMappings: { Mail: 'address' },
        },
        createdAt: testTime(11),
      });
      const now = testTime(12);
      const result = await ctx.store.commitBatch({
        target: { create: mailing },
        batch,
        deliveries,
        profiles: [
          { address: 'a@example.com', name: 'Ånne', traits: { firstName: 'Ånne' } },
          { address: 'b@example.com' },
        ],
        profileOptions: { ...PRESERVE, groupId: group.id },
        sourceJobs: [job],
        now,
      });
      const expected = { ...mailing, batchCount: 1, updatedAt: now };
      expect(result).toEqual({ inserted: 2, mailing: expected });
      expect(await ctx.store.getMailing(project.id, mailing.ref)).toEqual(expected);
      expect(await ctx.store.getMailingById(mailing.id)).toEqual(expected);
      for (const d of deliveries) expect(await ctx.store.getDelivery(d.id)).toEqual(d);
      expect((await ctx.store.getProfile(project.id, 'a@example.com'))?.name).toBe('Ånne');
      expect(await ctx.store.listGroups(project.id)).toEqual([{ ...group, members: 2 }]);
      expect(await ctx.store.listSourceJobs(mailing.id)).toEqual([job]);
    });

    it('a duplicate ref in the project is a CONFLICT and writes nothing', async () => {
      const seeded = await seedMailing(ctx.store, { addresses: ['a@example.com'] });
      const clash = makeMailing(seeded.project.id, { ref: seeded.mailing.ref, kind: seeded.mailing.kind });
      const batch = makeBatch(clash.id);
      const delivery = makeDelivery(clash, batch, 'new@example.com');
      await expectStoreError(
        ctx.store.commitBatch({
          target: { create: clash },
          batch,
          deliveries: [delivery],
          profiles: [{ address: 'new@example.com' }],
          profileOptions: PRESERVE,
          sourceJobs: [makeSourceJob(clash, batch)],
          now: testTime(5),
        }),
        'CONFLICT',
      );
      expect(await ctx.store.getMailingById(clash.id)).toBeUndefined();
      expect(await ctx.store.getDelivery(delivery.id)).toBeUndefined();
      expect(await ctx.store.getProfile(seeded.project.id, 'new@example.com')).toBeUndefined();
      expect(await ctx.store.listSourceJobs(clash.id)).toEqual([]);
      expect(await ctx.store.getMailing(seeded.project.id, seeded.mailing.ref)).toEqual(
        seeded.result.mailing,
      );
    });

    it('the same ref in another project is a different mailing', async () => {
      const seeded = await seedMailing(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      const twin = await seedMailing(ctx.store, { project: other, mailing: { ref: seeded.mailing.ref } });
      expect(await ctx.store.getMailing(other.id, seeded.mailing.ref)).toEqual(twin.result.mailing);
      expect(await ctx.store.getMailing(seeded.project.id, seeded.mailing.ref)).toEqual(
        seeded.result.mailing,
      );
    });

    it('appends a batch: skips existing addresses, counts only new ones, sets status and batchCount', async () => {
      const seeded = await seedMailing(ctx.store, { addresses: addresses(3) });
      const write = appendWrite(seeded, addresses(4, 1), 2);
      const result = await ctx.store.commitBatch(write);
      expect(result.inserted).toBe(2);
      expect(result.mailing).toEqual({
        ...seeded.result.mailing,
        status: 'sending',
        batchCount: 2,
        updatedAt: write.now,
      });
      expect(await ctx.store.getMailingById(seeded.mailing.id)).toEqual(result.mailing);
      // The first delivery of an address stays; the duplicate is not written.
      expect(await ctx.store.findDelivery(seeded.mailing.id, addresses(1, 1)[0] ?? '')).toEqual(
        seeded.deliveries[1],
      );
      const counts = await ctx.store.countDeliveries(seeded.mailing.id);
      expect(counts.queued).toBe(5);
    });

    it('refuses an append when the status is not allowed: BROADCAST_CLOSED, nothing written', async () => {
      const seeded = await seedMailing(ctx.store, {
        addresses: addresses(2),
        mailing: { status: 'cancelled' },
      });
      const write = appendWrite(seeded, addresses(2, 10), 2, {
        profiles: [{ address: 'p@example.com' }],
      });
      write.sourceJobs = [makeSourceJob(seeded.mailing, write.batch)];
      await expectStoreError(ctx.store.commitBatch(write), 'BROADCAST_CLOSED');
      expect(await ctx.store.getMailingById(seeded.mailing.id)).toEqual(seeded.result.mailing);
      for (const d of write.deliveries) expect(await ctx.store.getDelivery(d.id)).toBeUndefined();
      expect(await ctx.store.getProfile(seeded.project.id, 'p@example.com')).toBeUndefined();
      expect(await ctx.store.listSourceJobs(seeded.mailing.id)).toEqual([]);
    });

    it('concurrent commits to one mailing give exactly one delivery per address', async () => {
      const seeded = await seedMailing(ctx.store, { addresses: addresses(20) });
      const writes = Array.from({ length: ctx.concurrency }, (_, i) =>
        appendWrite(seeded, addresses(60, i * 15), i + 2),
      );
      const results = await Promise.all(writes.map((w) => ctx.store.commitBatch(w)));
      const distinct = new Set(writes.flatMap((w) => w.deliveries.map((d) => d.address)));
      for (const a of addresses(20)) distinct.delete(a);
      expect(results.reduce((sum, r) => sum + r.inserted, 0)).toBe(distinct.size);
      const listed = await ctx.store.listDeliveries(seeded.mailing.id, { limit: 10_000 });
      expect(listed).toHaveLength(20 + distinct.size);
      expect(new Set(listed.map((d) => d.address)).size).toBe(listed.length);
      expect((await ctx.store.getMailingById(seeded.mailing.id))?.batchCount).toBe(1 + ctx.concurrency);
    });
  });

  describe('mailings', () => {
    it('getMailing is scoped by project; unknown refs and ids give undefined', async () => {
      const seeded = await seedMailing(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      expect(await ctx.store.getMailing(other.id, seeded.mailing.ref)).toBeUndefined();
      expect(await ctx.store.getMailing(seeded.project.id, 'bc_missing')).toBeUndefined();
      expect(await ctx.store.getMailingById('mlg_missing')).toBeUndefined();
    });

    it('rows are copies: mutating what went in or came out changes nothing stored', async () => {
      const seeded = await seedMailing(ctx.store, {
        addresses: addresses(1),
        mailing: { content: { ...makeMailing('x').content, variables: richVariables() } },
        delivery: () => ({ variables: richVariables() }),
      });
      const [delivery] = seeded.deliveries;
      if (!delivery) throw new Error('expected a delivery');
      const stored = structuredClone(delivery);
      delivery.variables.greeting = 'changed after the write';
      seeded.mailing.content.variables.greeting = 'changed after the write';
      const read = await ctx.store.getDelivery(delivery.id);
      if (!read) throw new Error('expected the delivery');
      read.variables.count = 99;
      read.nextAttemptAt.setTime(0);
      const mailing = await ctx.store.getMailingById(seeded.mailing.id);
      if (mailing) mailing.content.variables.count = 99;
      expect(await ctx.store.getDelivery(delivery.id)).toEqual(stored);
      expect(await ctx.store.getMailingById(seeded.mailing.id)).toEqual(seeded.result.mailing);
      expect((await ctx.store.getMailingById(seeded.mailing.id))?.content.variables).toEqual(richVariables());
    });

    it('listMailings: one kind, newest first, paged by id, scoped by project', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      const created = [];
      for (const i of [3, 0, 4, 1, 2]) {
        const s = await seedMailing(ctx.store, { project, mailing: { createdAt: testTime(i * 1_000) } });
        created[i] = s.result.mailing;
      }
      await seedMailing(ctx.store, { project, mailing: { kind: 'message', createdAt: testTime(9_000) } });
      await seedMailing(ctx.store, { project: other, mailing: { createdAt: testTime(9_000) } });
      const newestFirst = [...created].reverse();
      expect(await ctx.store.listMailings(project.id, 'broadcast', { limit: 100 })).toEqual(newestFirst);
      const first = await ctx.store.listMailings(project.id, 'broadcast', { limit: 2 });
      expect(first).toEqual(newestFirst.slice(0, 2));
      const second = await ctx.store.listMailings(project.id, 'broadcast', {
        after: first[1]?.id ?? null,
        limit: 2,
      });
      expect(second).toEqual(newestFirst.slice(2, 4));
      const third = await ctx.store.listMailings(project.id, 'broadcast', {
        after: second[1]?.id ?? null,
        limit: 2,
      });
      expect(third).toEqual(newestFirst.slice(4));
      expect(await ctx.store.listMailings(project.id, 'message', { limit: 100 })).toHaveLength(1);
    });

    it('setMailingStatus is a compare-and-set', async () => {
      const seeded = await seedMailing(ctx.store);
      const id = seeded.mailing.id;
      expect(await ctx.store.setMailingStatus(id, ['sending', 'completed'], 'cancelled', testTime(1))).toBe(
        false,
      );
      expect(await ctx.store.getMailingById(id)).toEqual(seeded.result.mailing);
      expect(await ctx.store.setMailingStatus(id, ['queued', 'sending'], 'sending', testTime(2))).toBe(true);
      expect(await ctx.store.getMailingById(id)).toEqual({
        ...seeded.result.mailing,
        status: 'sending',
        updatedAt: testTime(2),
      });
      expect(await ctx.store.setMailingStatus('mlg_missing', ['queued'], 'sending', testTime(3))).toBe(false);
    });

    it('of racing setMailingStatus calls with overlapping from, exactly one wins', async () => {
      const seeded = await seedMailing(ctx.store);
      const targets = ['cancelled', 'failed', 'completed', 'sending'] as const;
      const results = await Promise.all(
        Array.from({ length: ctx.concurrency }, (_, i) =>
          ctx.store.setMailingStatus(
            seeded.mailing.id,
            ['queued'],
            targets[i % targets.length] ?? 'sending',
            testTime(1),
          ),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect((await ctx.store.getMailingById(seeded.mailing.id))?.status).toBe(
        targets[winner % targets.length],
      );
    });
  });

  describe('completeMailingIfSettled', () => {
    it('completes only when every delivery is terminal', async () => {
      const seeded = await seedMailing(ctx.store, {
        addresses: addresses(5),
        delivery: (_, i) => ({
          status: (['sent', 'failed', 'suppressed', 'skipped', 'queued'] as const)[i] ?? 'queued',
        }),
        mailing: { status: 'sending' },
      });
      expect(await ctx.store.completeMailingIfSettled(seeded.mailing.id, testTime(1))).toBe(false);
      const [claimed] = await ctx.store.claimDeliveries({ now: testTime(10), limit: 10, leaseMs: 60_000 });
      expect(claimed).toBeDefined();
      if (!claimed) return;
      expect(await ctx.store.completeMailingIfSettled(seeded.mailing.id, testTime(11))).toBe(false);
      expect(await ctx.store.getMailingById(seeded.mailing.id)).toMatchObject({ status: 'sending' });
      await completeOne(ctx.store, claimed, { status: 'sent', now: testTime(12) });
      expect(await ctx.store.completeMailingIfSettled(seeded.mailing.id, testTime(13))).toBe(true);
      expect(await ctx.store.getMailingById(seeded.mailing.id)).toEqual({
        ...seeded.result.mailing,
        status: 'completed',
        updatedAt: testTime(13),
      });
      expect(await ctx.store.completeMailingIfSettled(seeded.mailing.id, testTime(14))).toBe(false);
    });

    it('does not complete while a source job is pending or running', async () => {
      const seeded = await seedMailing(ctx.store, {
        addresses: addresses(1),
        delivery: () => ({ status: 'sent' }),
        sourceJobs: (mailing, batch) => [makeSourceJob(mailing, batch)],
      });
      expect(await ctx.store.completeMailingIfSettled(seeded.mailing.id, testTime(1))).toBe(false);
      const job = await ctx.store.claimSourceJob({ now: testTime(2), leaseMs: 60_000 });
      expect(job?.status).toBe('running');
      expect(await ctx.store.completeMailingIfSettled(seeded.mailing.id, testTime(3))).toBe(false);
      if (!job) return;
      const page = { deliveries: [], profiles: [], profileOptions: PRESERVE, leaseUntil: testTime(60_000) };
      await ctx.store.commitSourcePage(job.id, job.leaseToken, {
        ...page,
        patch: { status: 'done' },
        now: testTime(4),
      });
      expect(await ctx.store.completeMailingIfSettled(seeded.mailing.id, testTime(5))).toBe(true);
    });

    it('racing a commit, it never completes a mailing that gets new open deliveries', async () => {
      for (let round = 0; round < 10; round++) {
        const seeded = await seedMailing(ctx.store, {
          addresses: addresses(3),
          delivery: () => ({ status: 'sent' }),
          mailing: { status: 'sending' },
        });
        const write = appendWrite(seeded, addresses(2, 10), 2);
        write.target = {
          mailingId: seeded.mailing.id,
          allowStatus: ['queued', 'sending'],
          setStatus: 'sending',
        };
        const [committed, completed] = await Promise.all([
          ctx.store.commitBatch(write).then(
            () => true,
            (error: unknown) => {
              expect((error as { code?: unknown }).code).toBe('BROADCAST_CLOSED');
              return false;
            },
          ),
          ctx.store.completeMailingIfSettled(seeded.mailing.id, testTime(1)),
        ]);
        // Exactly one of them wins: a commit first makes deliveries open; a completion first closes it.
        expect(committed).toBe(!completed);
        const mailing = await ctx.store.getMailingById(seeded.mailing.id);
        const counts = await ctx.store.countDeliveries(seeded.mailing.id);
        expect([mailing?.status, counts.queued]).toEqual(completed ? ['completed', 0] : ['sending', 2]);
      }
    });

    it('completes a queued mailing with no deliveries, but never a scheduled, cancelled or failed one', async () => {
      const empty = await seedMailing(ctx.store);
      expect(await ctx.store.completeMailingIfSettled(empty.mailing.id, testTime(1))).toBe(true);
      for (const status of ['scheduled', 'cancelled', 'failed'] as const) {
        const seeded = await seedMailing(ctx.store, {
          addresses: addresses(1),
          delivery: () => ({ status: 'skipped' }),
          mailing: { status },
        });
        expect(await ctx.store.completeMailingIfSettled(seeded.mailing.id, testTime(1))).toBe(false);
        expect((await ctx.store.getMailingById(seeded.mailing.id))?.status).toBe(status);
      }
    });
  });

  describe('reading deliveries', () => {
    it('getDelivery and findDelivery; unknown ones give undefined', async () => {
      const seeded = await seedMailing(ctx.store, { addresses: addresses(2) });
      const other = await seedMailing(ctx.store, { addresses: addresses(1, 5) });
      const [d0] = seeded.deliveries;
      expect(await ctx.store.getDelivery(d0?.id ?? '')).toEqual(d0);
      expect(await ctx.store.findDelivery(seeded.mailing.id, d0?.address ?? '')).toEqual(d0);
      expect(await ctx.store.findDelivery(other.mailing.id, d0?.address ?? '')).toBeUndefined();
      expect(await ctx.store.findDelivery(seeded.mailing.id, 'missing@example.com')).toBeUndefined();
      expect(await ctx.store.getDelivery('dlv_missing')).toBeUndefined();
    });

    it('listDeliveries pages by address and filters by status; countDeliveries has every status', async () => {
      const statuses: DeliveryStatus[] = ['queued', 'sent', 'failed', 'sent', 'skipped'];
      const list = addresses(23).reverse();
      const seeded = await seedMailing(ctx.store, {
        addresses: list,
        delivery: (_, i) => ({ status: statuses[i % statuses.length] }),
      });
      await seedMailing(ctx.store, { addresses: addresses(3) });
      const seen: string[] = [];
      let after: string | null = null;
      for (;;) {
        const page = await ctx.store.listDeliveries(seeded.mailing.id, { after, limit: 7 });
        expect(page.length).toBeLessThanOrEqual(7);
        if (page.length === 0) break;
        seen.push(...page.map((d) => d.address));
        after = page[page.length - 1]?.address ?? null;
      }
      expect(seen).toEqual(sorted(list));
      const sent = await ctx.store.listDeliveries(seeded.mailing.id, { status: 'sent', limit: 100 });
      const expectedSent = seeded.deliveries.filter((d) => d.status === 'sent');
      expect(sent).toEqual([...expectedSent].sort((a, b) => (a.address < b.address ? -1 : 1)));
      const pagedSent = await ctx.store.listDeliveries(seeded.mailing.id, {
        status: 'sent',
        after: sent[2]?.address ?? null,
        limit: 100,
      });
      expect(pagedSent).toEqual(sent.slice(3));
      expect(await ctx.store.countDeliveries(seeded.mailing.id)).toEqual({
        queued: 5,
        sending: 0,
        sent: 9,
        failed: 5,
        suppressed: 0,
        skipped: 4,
        bounced: 0,
        complained: 0,
      });
      expect(await ctx.store.countDeliveries('mlg_missing')).toEqual({
        queued: 0,
        sending: 0,
        sent: 0,
        failed: 0,
        suppressed: 0,
        skipped: 0,
        bounced: 0,
        complained: 0,
      });
    });
  });

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
}

/** A new single-message mailing of `projectId` with one delivery per address, as a write creating it. */
function createWrite(projectId: string, list: string[], now: Date): BatchWrite {
  const mailing = makeMailing(projectId, { kind: 'message' });
  const batch = makeBatch(mailing.id, { recipientCount: list.length });
  return {
    target: { create: mailing },
    batch,
    deliveries: list.map((address) => makeDelivery(mailing, batch, address)),
    profiles: list.map((address) => ({ address })),
    profileOptions: PRESERVE,
    sourceJobs: [],
    now,
  };
}

/** The optional `commitBatches`: several writes in one transaction, all or none. */
function describeCommitBatches(ctx: StoreSuiteContext): void {
  describe('commitBatches', () => {
    it('commits every write, in order, each as commitBatch would', async () => {
      if (!ctx.store.commitBatches) return;
      const { project } = await seedProject(ctx.store);
      const now = testTime(20);
      const writes = [
        createWrite(project.id, ['a@example.com'], now),
        createWrite(project.id, ['b@example.com', 'c@example.com'], now),
        createWrite(project.id, ['a@example.com', 'a@example.com'], now),
      ];
      const results = await ctx.store.commitBatches(writes);
      expect(results.map((r) => r.inserted)).toEqual([1, 2, 1]);
      for (const [i, write] of writes.entries()) {
        const created = 'create' in write.target ? write.target.create : undefined;
        expect(results[i]?.mailing).toEqual({ ...created, batchCount: 1, updatedAt: now });
        expect(await ctx.store.getMailing(project.id, created?.ref ?? '')).toEqual(results[i]?.mailing);
        expect(await ctx.store.getDelivery(write.deliveries[0]?.id ?? '')).toEqual(write.deliveries[0]);
      }
      expect(await ctx.store.getProfile(project.id, 'c@example.com')).toBeDefined();
    });

    it('one refused write (a ref that exists) writes none of them', async () => {
      if (!ctx.store.commitBatches) return;
      const seeded = await seedMailing(ctx.store, { addresses: ['x@example.com'] });
      const now = testTime(30);
      const good = createWrite(seeded.project.id, ['first@example.com'], now);
      const clash = createWrite(seeded.project.id, ['second@example.com'], now);
      if ('create' in clash.target) clash.target.create.ref = seeded.mailing.ref;
      await expectStoreError(ctx.store.commitBatches([good, clash]), 'CONFLICT');
      const created = 'create' in good.target ? good.target.create : undefined;
      expect(await ctx.store.getMailing(seeded.project.id, created?.ref ?? '')).toBeUndefined();
      expect(await ctx.store.getDelivery(good.deliveries[0]?.id ?? '')).toBeUndefined();
      expect(await ctx.store.getProfile(seeded.project.id, 'first@example.com')).toBeUndefined();
    });

    it('countWaitingByHour counts queued deliveries due after now by their UTC hour', async () => {
      if (!ctx.store.countWaitingByHour) return;
      const base = testTime(0).getTime() - (testTime(0).getTime() % 3_600_000);
      const dues = [
        base - 1_000,
        base + 5 * 60_000,
        base + 59 * 60_000,
        base + 3_600_000,
        base + 5 * 3_600_000,
      ];
      const seeded = await seedMailing(ctx.store, {
        addresses: dues.map((_, i) => `w${i}@example.com`),
        delivery: (_address, i) => ({ nextAttemptAt: new Date(dues[i] as number) }),
      });
      const waiting = await ctx.store.countWaitingByHour(seeded.mailing.id, new Date(base));
      expect(waiting).toEqual([
        { hour: new Date(base), count: 2 },
        { hour: new Date(base + 3_600_000), count: 1 },
        { hour: new Date(base + 5 * 3_600_000), count: 1 },
      ]);
      expect(await ctx.store.countWaitingByHour('no-such-mailing', new Date(base))).toEqual([]);
    });

    it('an empty list commits nothing and answers an empty list', async () => {
      if (!ctx.store.commitBatches) return;
      expect(await ctx.store.commitBatches([])).toEqual([]);
    });
  });
}
