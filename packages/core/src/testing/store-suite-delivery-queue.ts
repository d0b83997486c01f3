/** Store conformance: the DeliveryQueue role (claiming, leasing, completing and settling deliveries). */
import { describe, expect, it } from 'vitest';
import { testTime } from './store-fixtures.js';
import {
  addresses,
  completeOne,
  type StoreSuiteContext,
  seedMailing,
  sorted,
  withoutUpdatedAt,
} from './store-suite-helpers.js';

const LEASE = 60_000;

/** Registers the tests of claims, leases, outcomes, settling and nextDueAt. */
export function describeDeliveryQueue(ctx: StoreSuiteContext): void {
  describe('claimDeliveries', () => {
    it('claims due deliveries only, oldest nextAttemptAt first, up to the limit', async () => {
      const offsets = [500, -300, 0, 200, -100, 1_000];
      const seeded = await seedMailing(ctx.store, {
        addresses: addresses(offsets.length),
        delivery: (_, i) => ({ nextAttemptAt: testTime(offsets[i]) }),
      });
      const now = testTime(200);
      const first = await ctx.store.claimDeliveries({ now, limit: 2, leaseMs: LEASE });
      expect(first.map((d) => d.address)).toEqual([addresses(1, 1)[0], addresses(1, 4)[0]]);
      const second = await ctx.store.claimDeliveries({ now, limit: 10, leaseMs: LEASE });
      // nextAttemptAt equal to now is due.
      expect(second.map((d) => d.address)).toEqual([addresses(1, 2)[0], addresses(1, 3)[0]]);
      expect(await ctx.store.claimDeliveries({ now, limit: 10, leaseMs: LEASE })).toEqual([]);
      const later = await ctx.store.claimDeliveries({ now: testTime(1_000), limit: 10, leaseMs: LEASE });
      expect(later.map((d) => d.address)).toEqual([addresses(1, 0)[0], addresses(1, 5)[0]]);
      expect(seeded.deliveries).toHaveLength(6);
    });

    it("claims a single message's deliveries (priority 0) before a broadcast's, whatever their due times", async () => {
      const broadcast = await seedMailing(ctx.store, {
        mailing: { kind: 'broadcast' },
        addresses: addresses(4),
        delivery: (_, i) => ({ nextAttemptAt: testTime(-1_000 + i) }),
      });
      const single = await seedMailing(ctx.store, {
        mailing: { kind: 'message' },
        addresses: ['reset@example.org'],
        delivery: () => ({ nextAttemptAt: testTime(0), priority: 0 }),
      });
      const now = testTime(10);
      // The soonest due of either lane.
      expect(await ctx.store.nextDueAt(now)).toEqual(testTime(-1_000));
      const [first, ...rest] = await ctx.store.claimDeliveries({ now, limit: 3, leaseMs: LEASE });
      expect(first?.id).toBe(single.deliveries[0]?.id);
      expect(first?.priority).toBe(0);
      // The rest of the room goes to the broadcast, in due order; read back, its deliveries have no priority.
      expect(rest.map((d) => d.id)).toEqual(broadcast.deliveries.slice(0, 2).map((d) => d.id));
      expect(rest[0]?.priority).toBeUndefined();
      expect((await ctx.store.getDelivery(single.deliveries[0]?.id ?? ''))?.priority).toBe(0);
    });

    it("shares a claim among the projects with due broadcast deliveries: one project's backlog never holds back another's", async () => {
      // Project A's broadcast is older and bigger than the claim; B's and C's came later.
      const a = await seedMailing(ctx.store, {
        addresses: addresses(30),
        delivery: (_, i) => ({ nextAttemptAt: testTime(-1_000 + i) }),
      });
      const b = await seedMailing(ctx.store, {
        addresses: addresses(3),
        delivery: () => ({ nextAttemptAt: testTime(-10) }),
      });
      const c = await seedMailing(ctx.store, {
        addresses: addresses(10),
        delivery: (_, i) => ({ nextAttemptAt: testTime(-5 + i / 10) }),
      });
      const single = await seedMailing(ctx.store, {
        project: a.project,
        mailing: { kind: 'message' },
        addresses: ['reset@example.org'],
        delivery: () => ({ nextAttemptAt: testTime(0), priority: 0 }),
      });
      const now = testTime(10);
      const claimed = await ctx.store.claimDeliveries({ now, limit: 10, leaseMs: LEASE });
      const count = (seeded: { mailing: { id: string } }) =>
        claimed.filter((d) => d.mailingId === seeded.mailing.id).length;
      expect(claimed).toHaveLength(10);
      // The single message first, then the room is shared: B all of its 3, A and C at least 3 each.
      expect(claimed[0]?.mailingId).toBe(single.mailing.id);
      expect(count(b)).toBe(3);
      expect(count(a)).toBeGreaterThanOrEqual(3);
      expect(count(c)).toBeGreaterThanOrEqual(3);
      // Nothing is lost or claimed twice: the rest comes in later claims.
      const rest = await ctx.store.claimDeliveries({ now, limit: 100, leaseMs: LEASE });
      expect(sorted([...claimed, ...rest].map((d) => d.id))).toEqual(
        sorted([a, b, c, single].flatMap((seeded) => seeded.deliveries.map((d) => d.id))),
      );
    });

    it('a claim sets the lease, bumps leaseToken and attempts, and is durable', async () => {
      const seeded = await seedMailing(ctx.store, {
        addresses: addresses(1),
        delivery: () => ({ attempts: 2, leaseToken: 7, variables: { a: { b: ['ç'] } } }),
      });
      const original = seeded.deliveries[0];
      if (!original) throw new Error('expected a delivery');
      const now = testTime(1_234);
      const [claimed] = await ctx.store.claimDeliveries({ now, limit: 5, leaseMs: LEASE });
      const expected = {
        ...withoutUpdatedAt(original),
        status: 'sending',
        attempts: 3,
        leaseToken: 8,
        leaseExpiresAt: testTime(1_234 + LEASE),
      };
      expect(claimed).toMatchObject(expected);
      expect(await ctx.store.getDelivery(original.id)).toMatchObject(expected);
    });

    it('a live lease is not claimed again; an expired one is, with a new token', async () => {
      await seedMailing(ctx.store, { addresses: addresses(1) });
      const [first] = await ctx.store.claimDeliveries({ now: testTime(0), limit: 5, leaseMs: LEASE });
      expect(first?.leaseToken).toBe(1);
      expect(await ctx.store.claimDeliveries({ now: testTime(LEASE - 1), limit: 5, leaseMs: LEASE })).toEqual(
        [],
      );
      const [again] = await ctx.store.claimDeliveries({ now: testTime(LEASE), limit: 5, leaseMs: LEASE });
      expect(again).toMatchObject({
        id: first?.id,
        leaseToken: 2,
        attempts: 2,
        leaseExpiresAt: testTime(2 * LEASE),
      });
    });

    it('skips deliveries of cancelled and failed mailings; a scheduled one is due by time alone', async () => {
      for (const status of ['cancelled', 'failed'] as const) {
        await seedMailing(ctx.store, { addresses: addresses(2), mailing: { status } });
      }
      const open = await seedMailing(ctx.store, {
        addresses: addresses(2),
        mailing: { status: 'sending' },
        delivery: (_, i) => ({ nextAttemptAt: testTime(-10 + i) }),
      });
      const scheduled = await seedMailing(ctx.store, {
        addresses: addresses(2),
        mailing: {
          status: 'scheduled',
          options: { acquiringAudience: null, scheduleFor: testTime(5_000), storeContent: false },
        },
        delivery: () => ({ nextAttemptAt: testTime(5_000) }),
      });
      const claimed = await ctx.store.claimDeliveries({ now: testTime(0), limit: 100, leaseMs: LEASE });
      expect(claimed.map((d) => d.mailingId)).toEqual([open.mailing.id, open.mailing.id]);
      const later = await ctx.store.claimDeliveries({ now: testTime(5_000), limit: 100, leaseMs: LEASE });
      expect(later.map((d) => d.mailingId)).toEqual([scheduled.mailing.id, scheduled.mailing.id]);
    });

    it('concurrent claimers get disjoint sets whose union is every due delivery', async () => {
      const total = 300;
      const seeded = await seedMailing(ctx.store, {
        addresses: addresses(total),
        delivery: (_, i) => ({ nextAttemptAt: testTime(-i) }),
      });
      const limit = Math.ceil((2 * total) / ctx.concurrency);
      const batches = await Promise.all(
        Array.from({ length: ctx.concurrency }, () =>
          ctx.store.claimDeliveries({ now: testTime(0), limit, leaseMs: LEASE }),
        ),
      );
      const ids = batches.flat().map((d) => d.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(sorted(ids)).toEqual(sorted(seeded.deliveries.map((d) => d.id)));
      for (const batch of batches) for (const d of batch) expect(d.leaseToken).toBe(1);
    });
  });

  describe('renewLeases and completeDeliveries', () => {
    it("an uncounted queued outcome gives the claim's attempt back, in one call with counted ones", async () => {
      await seedMailing(ctx.store, {
        addresses: addresses(2),
        delivery: () => ({ attempts: 2 }),
      });
      const claimed = await ctx.store.claimDeliveries({ now: testTime(10), limit: 5, leaseMs: LEASE });
      expect(claimed.map((d) => d.attempts)).toEqual([3, 3]);
      const [a, b] = claimed as [(typeof claimed)[0], (typeof claimed)[0]];
      const later = testTime(5_000);
      const written = await ctx.store.completeDeliveries([
        {
          id: a.id,
          leaseToken: a.leaseToken,
          outcome: { status: 'queued', nextAttemptAt: later, uncounted: true, now: testTime(20) },
        },
        {
          id: b.id,
          leaseToken: b.leaseToken,
          outcome: { status: 'queued', nextAttemptAt: later, now: testTime(20) },
        },
      ]);
      expect(written).toEqual([true, true]);
      expect(await ctx.store.getDelivery(a.id)).toMatchObject({
        status: 'queued',
        attempts: 2,
        nextAttemptAt: later,
      });
      expect(await ctx.store.getDelivery(b.id)).toMatchObject({
        status: 'queued',
        attempts: 3,
        nextAttemptAt: later,
      });
      // A fenced-out uncounted outcome changes nothing.
      expect(
        await completeOne(ctx.store, a, {
          status: 'queued',
          nextAttemptAt: later,
          uncounted: true,
          now: testTime(30),
        }),
      ).toBe(false);
      expect((await ctx.store.getDelivery(a.id))?.attempts).toBe(2);
    });

    it("an uncounted suppressed or skipped outcome gives the claim's attempt back; an uncounted failure does not", async () => {
      await seedMailing(ctx.store, { addresses: addresses(3) });
      const claimed = await ctx.store.claimDeliveries({ now: testTime(10), limit: 5, leaseMs: LEASE });
      const [a, b, c] = claimed as [(typeof claimed)[0], (typeof claimed)[0], (typeof claimed)[0]];
      expect(claimed.map((d) => d.attempts)).toEqual([1, 1, 1]);
      expect(
        await ctx.store.completeDeliveries([
          {
            id: a.id,
            leaseToken: a.leaseToken,
            outcome: { status: 'suppressed', lastError: 'suppressed', uncounted: true, now: testTime(20) },
          },
          {
            id: b.id,
            leaseToken: b.leaseToken,
            outcome: { status: 'skipped', lastError: 'unsubscribed', uncounted: true, now: testTime(20) },
          },
          {
            id: c.id,
            leaseToken: c.leaseToken,
            outcome: { status: 'failed', lastError: 'refused', uncounted: true, now: testTime(20) },
          },
        ]),
      ).toEqual([true, true, true]);
      expect(await ctx.store.getDelivery(a.id)).toMatchObject({ status: 'suppressed', attempts: 0 });
      expect(await ctx.store.getDelivery(b.id)).toMatchObject({ status: 'skipped', attempts: 0 });
      expect(await ctx.store.getDelivery(c.id)).toMatchObject({ status: 'failed', attempts: 1 });
    });

    it('renewLeases extends only the leases still held with that token', async () => {
      await seedMailing(ctx.store, { addresses: addresses(3) });
      const [a, b, c] = await ctx.store.claimDeliveries({ now: testTime(0), limit: 3, leaseMs: LEASE });
      if (!a || !b || !c) throw new Error('expected three claims');
      await completeOne(ctx.store, c, { status: 'sent', now: testTime(1) });
      const until = testTime(5 * LEASE + 7);
      const renewed = await ctx.store.renewLeases(
        [
          { id: a.id, leaseToken: a.leaseToken },
          { id: b.id, leaseToken: b.leaseToken + 1 },
          { id: c.id, leaseToken: c.leaseToken },
        ],
        until,
      );
      expect(renewed).toEqual([a.id]);
      expect((await ctx.store.getDelivery(a.id))?.leaseExpiresAt).toEqual(until);
      expect((await ctx.store.getDelivery(b.id))?.leaseExpiresAt).toEqual(b.leaseExpiresAt);
      expect(await ctx.store.renewLeases([], until)).toEqual([]);
    });

    it('completeDeliveries writes an outcome under the current token', async () => {
      await seedMailing(ctx.store, { addresses: addresses(1) });
      const [claimed] = await ctx.store.claimDeliveries({ now: testTime(0), limit: 1, leaseMs: LEASE });
      if (!claimed) throw new Error('expected a claim');
      const content = { subject: 'Grüße 👋', text: 'Text — ✓', html: '<p>Ω</p>' };
      const ok = await completeOne(ctx.store, claimed, {
        status: 'sent',
        lastResponse: '250 2.0.0 Ok: queued as ABC',
        lastError: null,
        sentAt: testTime(10_001),
        content,
        now: testTime(10_002),
      });
      expect(ok).toBe(true);
      expect(await ctx.store.getDelivery(claimed.id)).toMatchObject({
        status: 'sent',
        lastResponse: '250 2.0.0 Ok: queued as ABC',
        lastError: null,
        sentAt: testTime(10_001),
        content,
        attempts: 1,
        leaseToken: 1,
        messageId: claimed.messageId,
        updatedAt: testTime(10_002),
      });
      expect(
        await completeOne(ctx.store, claimed, {
          status: 'failed',
          now: testTime(3),
        }),
      ).toBe(false);
      expect((await ctx.store.getDelivery(claimed.id))?.status).toBe('sent');
    });

    it('a stale token writes nothing and returns false', async () => {
      await seedMailing(ctx.store, { addresses: addresses(1) });
      const [first] = await ctx.store.claimDeliveries({ now: testTime(0), limit: 1, leaseMs: LEASE });
      const [second] = await ctx.store.claimDeliveries({ now: testTime(LEASE), limit: 1, leaseMs: LEASE });
      if (!first || !second) throw new Error('expected two claims');
      const before = await ctx.store.getDelivery(first.id);
      const stale = await completeOne(ctx.store, first, {
        status: 'failed',
        lastError: 'late',
        now: testTime(LEASE + 1),
      });
      expect(stale).toBe(false);
      expect(await ctx.store.getDelivery(first.id)).toEqual(before);
      expect(
        await completeOne(
          ctx.store,
          { id: 'dlv_missing', leaseToken: 1 },
          { status: 'sent', now: testTime(1) },
        ),
      ).toBe(false);
    });

    it('completeDeliveries writes each outcome fenced on its own and reports which were written', async () => {
      await seedMailing(ctx.store, { addresses: addresses(4) });
      const [a, b, c, d] = await ctx.store.claimDeliveries({ now: testTime(0), limit: 4, leaseMs: LEASE });
      if (!a || !b || !c || !d) throw new Error('expected four claims');
      // One lease is lost to another claimer before the flush.
      const [d2] = await ctx.store.claimDeliveries({ now: testTime(LEASE), limit: 1, leaseMs: LEASE });
      expect(d2?.id).toBeDefined();
      const stolen = [a, b, c, d].find((x) => x.id === d2?.id);
      const retryAt = testTime(LEASE + 90_000);
      const items = [a, b, c, d].map((x, i) => ({
        id: x.id,
        leaseToken: x.leaseToken,
        outcome:
          i === 1
            ? ({
                status: 'queued',
                nextAttemptAt: retryAt,
                lastError: 'later',
                now: testTime(LEASE + 2),
              } as const)
            : ({
                status: 'sent',
                lastResponse: `250 ok ${i}`,
                sentAt: testTime(LEASE + 1),
                now: testTime(LEASE + 2),
              } as const),
      }));
      const written = await ctx.store.completeDeliveries(items);
      expect(written).toEqual([a, b, c, d].map((x) => x.id !== stolen?.id));
      for (const [i, x] of [a, b, c, d].entries()) {
        const row = await ctx.store.getDelivery(x.id);
        if (x.id === stolen?.id) {
          expect(row?.status).toBe('sending');
          expect(row?.leaseToken).toBe(2);
        } else if (i === 1) {
          expect(row).toMatchObject({ status: 'queued', nextAttemptAt: retryAt, leaseExpiresAt: null });
        } else {
          expect(row).toMatchObject({
            status: 'sent',
            lastResponse: `250 ok ${i}`,
            updatedAt: testTime(LEASE + 2),
          });
        }
      }
      expect(await ctx.store.completeDeliveries([])).toEqual([]);
    });

    it('a bounced outcome (a hard bounce at send time) is final and counted as bounced', async () => {
      const { mailing } = await seedMailing(ctx.store, { addresses: addresses(1) });
      const [claimed] = await ctx.store.claimDeliveries({ now: testTime(0), limit: 1, leaseMs: LEASE });
      if (!claimed) throw new Error('expected a claim');
      const written = await ctx.store.completeDeliveries([
        {
          id: claimed.id,
          leaseToken: claimed.leaseToken,
          outcome: {
            status: 'bounced',
            lastResponse: '550 5.1.1 <r@example.com>: no such user',
            lastError: '550 5.1.1 no such user',
            now: testTime(5),
          },
        },
      ]);
      expect(written).toEqual([true]);
      expect(await ctx.store.getDelivery(claimed.id)).toMatchObject({
        status: 'bounced',
        lastResponse: '550 5.1.1 <r@example.com>: no such user',
        leaseExpiresAt: null,
      });
      expect((await ctx.store.countDeliveries(mailing.id)).bounced).toBe(1);
      expect(await ctx.store.completeMailingIfSettled(mailing.id, testTime(6))).toBe(true);
    });

    it('an id repeated in one completeDeliveries call applies in order: the later item finds the lease ended', async () => {
      await seedMailing(ctx.store, { addresses: addresses(2) });
      const [a, b] = await ctx.store.claimDeliveries({ now: testTime(0), limit: 2, leaseMs: LEASE });
      if (!a || !b) throw new Error('expected two claims');
      const sent = { status: 'sent', lastResponse: '250 first', now: testTime(1) } as const;
      const written = await ctx.store.completeDeliveries([
        { id: a.id, leaseToken: a.leaseToken, outcome: sent },
        { id: b.id, leaseToken: b.leaseToken, outcome: sent },
        {
          id: a.id,
          leaseToken: a.leaseToken,
          outcome: { status: 'failed', lastError: 'again', now: testTime(2) },
        },
      ]);
      expect(written).toEqual([true, true, false]);
      expect(await ctx.store.getDelivery(a.id)).toMatchObject({
        status: 'sent',
        lastResponse: '250 first',
        lastError: null,
        updatedAt: testTime(1),
      });
    });

    it('a queued outcome clears the lease and makes the delivery due again at nextAttemptAt', async () => {
      await seedMailing(ctx.store, { addresses: addresses(1) });
      const [claimed] = await ctx.store.claimDeliveries({ now: testTime(0), limit: 1, leaseMs: LEASE });
      if (!claimed) throw new Error('expected a claim');
      const retryAt = testTime(30_000);
      const ok = await completeOne(ctx.store, claimed, {
        status: 'queued',
        nextAttemptAt: retryAt,
        lastResponse: '421 4.7.0 Try again later',
        lastError: 'Try again later',
        now: testTime(5),
      });
      expect(ok).toBe(true);
      expect(await ctx.store.getDelivery(claimed.id)).toMatchObject({
        status: 'queued',
        nextAttemptAt: retryAt,
        leaseExpiresAt: null,
        lastError: 'Try again later',
        lastResponse: '421 4.7.0 Try again later',
      });
      expect(await ctx.store.nextDueAt()).toEqual(retryAt);
      expect(await ctx.store.claimDeliveries({ now: testTime(29_999), limit: 1, leaseMs: LEASE })).toEqual(
        [],
      );
      const [again] = await ctx.store.claimDeliveries({ now: retryAt, limit: 1, leaseMs: LEASE });
      expect(again).toMatchObject({ id: claimed.id, attempts: 2, leaseToken: 2, status: 'sending' });
    });
  });

  describe('settleOpenDeliveries and nextDueAt', () => {
    it('settles queued and expired-lease deliveries of the mailing only', async () => {
      const seeded = await seedMailing(ctx.store, {
        addresses: addresses(5),
        delivery: (_, i) => ({
          status: i === 4 ? 'sent' : 'queued',
          nextAttemptAt: testTime([-20, -10, 0, 500, 0][i]),
        }),
      });
      const other = await seedMailing(ctx.store, {
        addresses: addresses(1),
        delivery: () => ({ nextAttemptAt: testTime(9) }),
      });
      // Addresses 0 and 1 are claimed: 0 with a lease that expires before `now`, 1 with one that does not.
      const [expired] = await ctx.store.claimDeliveries({ now: testTime(0), limit: 1, leaseMs: 1_000 });
      const [live] = await ctx.store.claimDeliveries({ now: testTime(0), limit: 1, leaseMs: LEASE });
      if (!expired || !live) throw new Error('expected two claims');
      const now = testTime(2_000);
      expect(
        await ctx.store.settleOpenDeliveries(seeded.mailing.id, 'skipped', 'Broadcast cancelled', now),
      ).toBe(3);
      const byAddress = new Map(
        (await ctx.store.listDeliveries(seeded.mailing.id, { limit: 10 })).map((d) => [d.address, d]),
      );
      const at = (i: number) => byAddress.get(addresses(1, i)[0] ?? '');
      for (const i of [0, 2, 3])
        expect(at(i)).toMatchObject({ status: 'skipped', lastError: 'Broadcast cancelled' });
      expect(at(1)).toMatchObject({ status: 'sending', leaseToken: live.leaseToken });
      expect(at(4)?.status).toBe('sent');
      expect((await ctx.store.findDelivery(other.mailing.id, addresses(1)[0] ?? ''))?.status).toBe('queued');
      expect(await ctx.store.settleOpenDeliveries(seeded.mailing.id, 'failed', 'again', now)).toBe(0);
    });

    it('nextDueAt is the earliest nextAttemptAt of a claimable delivery', async () => {
      expect(await ctx.store.nextDueAt()).toBeUndefined();
      await seedMailing(ctx.store, {
        addresses: addresses(1),
        delivery: () => ({ nextAttemptAt: testTime(-5_000) }),
        mailing: { status: 'cancelled' },
      });
      await seedMailing(ctx.store, {
        addresses: addresses(1),
        delivery: () => ({ nextAttemptAt: testTime(-4_000), status: 'sent' }),
      });
      expect(await ctx.store.nextDueAt()).toBeUndefined();
      await seedMailing(ctx.store, {
        addresses: addresses(3),
        delivery: (_, i) => ({ nextAttemptAt: testTime([7_007, 3_003, 5_005][i]) }),
      });
      expect(await ctx.store.nextDueAt()).toEqual(testTime(3_003));
    });
  });
}
