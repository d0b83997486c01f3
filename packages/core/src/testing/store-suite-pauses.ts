/** Store conformance: the PauseStore role, and the claims and `nextDueAt` passing over what it pauses. */
import { expect, it } from 'vitest';
import { SENDER_BLOCK_HELD, SENDER_BLOCK_RESUMED } from '../store/delivery-queue.js';
import type { PauseRecord } from '../store/pause-store.js';
import { testTime } from './store-fixtures.js';
import { makeEvent } from './store-suite-events.js';
import { addresses, type StoreSuiteContext, seedMailing, sorted } from './store-suite-helpers.js';

const LEASE = 60_000;

/** A test pause. */
function makePause(projectId: string, overrides: Partial<PauseRecord> = {}): PauseRecord {
  return {
    projectId,
    scope: 'project',
    target: projectId,
    domains: [],
    by: 'operator',
    reason: 'maintenance ç',
    rule: null,
    createdAt: testTime(),
    until: null,
    ...overrides,
  };
}

/** Registers the tests of pauses. */
export function describePauses(ctx: StoreSuiteContext): void {
  it('adds a pause once, with its event; lists and removes it', async () => {
    const { project, mailing } = await seedMailing(ctx.store, { addresses: addresses(1) });
    const rule = {
      name: 'broadcast.hard-bounces',
      signal: 'hard-bounce',
      count: 30,
      attempts: 500,
      rate: 0.06,
      threshold: 0.05,
      minimum: 500,
      windowMs: null,
      since: null,
    };
    const pause = makePause(project.id, { scope: 'broadcast', target: mailing.id, by: 'guard', rule });
    const event = makeEvent(project.id, { type: 'broadcast.paused' });
    expect(await ctx.store.addPause(pause, testTime(), { events: [event], messages: [] })).toBe(true);
    const again = makeEvent(project.id, { type: 'broadcast.paused' });
    expect(await ctx.store.addPause(pause, testTime(1), { events: [again], messages: [] })).toBe(false);
    expect(await ctx.store.listPauses({ projectId: project.id, now: testTime(2) })).toEqual([pause]);
    expect(await ctx.store.listPauses({ now: testTime(2) })).toEqual([pause]);
    expect(await ctx.store.listPauses({ projectId: 'prj_other', now: testTime(2) })).toEqual([]);
    const events = await ctx.store.listEvents(project.id, {}, { limit: 10 });
    expect(events.map((e) => e.id)).toEqual([event.id]);
    const resumed = makeEvent(project.id, { type: 'broadcast.resumed' });
    const removed = await ctx.store.removePause(project.id, 'broadcast', mailing.id, testTime(3), {
      events: [resumed],
      messages: [],
    });
    expect(removed).toEqual(pause);
    expect(
      await ctx.store.removePause(project.id, 'broadcast', mailing.id, testTime(4), {
        events: [makeEvent(project.id, { type: 'broadcast.resumed' })],
        messages: [],
      }),
    ).toBeUndefined();
    expect(sorted((await ctx.store.listEvents(project.id, {}, { limit: 10 })).map((e) => e.id))).toEqual(
      sorted([event.id, resumed.id]),
    );
  });

  it('a timed pause ends by itself: not listed after `until`, replaced by a new one, not returned by remove', async () => {
    const { project } = await seedMailing(ctx.store, { addresses: [] });
    const timed = makePause(project.id, {
      scope: 'destination',
      target: 'google',
      domains: ['gmail.com', 'googlemail.com'],
      until: testTime(1_000),
    });
    expect(await ctx.store.addPause(timed, testTime())).toBe(true);
    expect(await ctx.store.listPauses({ projectId: project.id, now: testTime(999) })).toEqual([timed]);
    expect(await ctx.store.listPauses({ projectId: project.id, now: testTime(1_000) })).toEqual([]);
    const next = { ...timed, createdAt: testTime(2_000), until: testTime(3_000) };
    expect(await ctx.store.addPause(next, testTime(2_000))).toBe(true);
    expect(await ctx.store.listPauses({ projectId: project.id, now: testTime(2_000) })).toEqual([next]);
    expect(await ctx.store.removePause(project.id, 'destination', 'google', testTime(3_000))).toBeUndefined();
    expect(await ctx.store.listPauses({ projectId: project.id, now: testTime(0) })).toEqual([]);
  });

  it('of concurrent adds of one pause exactly one writes', async () => {
    const { project } = await seedMailing(ctx.store, { addresses: [] });
    const results = await Promise.all(
      Array.from({ length: ctx.concurrency }, (_, i) =>
        ctx.store.addPause(makePause(project.id, { reason: `r${i}` }), testTime()),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('claims and nextDueAt pass over paused broadcasts, projects and destinations; resume takes them, times kept', async () => {
    const paused = await seedMailing(ctx.store, {
      addresses: addresses(2),
      delivery: (_, i) => ({ nextAttemptAt: testTime(-100 + i) }),
    });
    await seedMailing(ctx.store, {
      project: paused.project,
      addresses: ['a@gmail.com', 'b@x_y.test', 'c@xay.test', 'd@example.test'],
      delivery: (_, i) => ({ nextAttemptAt: testTime(-50 + i) }),
    });
    const third = await seedMailing(ctx.store, {
      addresses: addresses(1),
      delivery: () => ({ nextAttemptAt: testTime(-10) }),
    });
    const p = paused.project.id;
    await ctx.store.addPause(makePause(p, { scope: 'broadcast', target: paused.mailing.id }), testTime());
    await ctx.store.addPause(
      makePause(p, { scope: 'destination', target: 'g', domains: ['gmail.com', 'x_y.test'] }),
      testTime(),
    );
    await ctx.store.addPause(makePause(third.project.id), testTime());
    expect(await ctx.store.nextDueAt(testTime())).toEqual(testTime(-48));
    const claimed = await ctx.store.claimDeliveries({ now: testTime(), limit: 10, leaseMs: LEASE });
    // `x_y.test` is a domain, not a pattern: `xay.test` is not held back.
    expect(claimed.map((d) => d.address)).toEqual(['c@xay.test', 'd@example.test']);
    expect(await ctx.store.nextDueAt(testTime())).toBeUndefined();
    await ctx.store.removePause(p, 'broadcast', paused.mailing.id, testTime());
    await ctx.store.removePause(p, 'destination', 'g', testTime());
    await ctx.store.removePause(third.project.id, 'project', third.project.id, testTime());
    expect(await ctx.store.nextDueAt(testTime())).toEqual(testTime(-100));
    const rest = await ctx.store.claimDeliveries({ now: testTime(), limit: 10, leaseMs: LEASE });
    expect(rest.map((d) => [d.address, d.nextAttemptAt.getTime()])).toEqual([
      [paused.deliveries[0]?.address, testTime(-100).getTime()],
      [paused.deliveries[1]?.address, testTime(-99).getTime()],
      ['a@gmail.com', testTime(-50).getTime()],
      ['b@x_y.test', testTime(-49).getTime()],
      [third.deliveries[0]?.address, testTime(-10).getTime()],
    ]);
  });

  it('removePause releases the deliveries held for a sender-side block that it covers, and only those', async () => {
    const held = (deadline: number) => ({
      lastError: `550 5.7.1 policy block ${SENDER_BLOCK_HELD}`,
      nextAttemptAt: testTime(deadline),
    });
    const first = await seedMailing(ctx.store, {
      addresses: ['a@gmail.com', 'b@gmail.com', 'c@gmail.com', 'd@other.test'],
      delivery: (address) =>
        address.startsWith('c@')
          ? { lastError: '451 4.7.1 greylisted', nextAttemptAt: testTime(1_000) }
          : held(address.startsWith('b@') ? 5 : 1_000),
    });
    const p = first.project.id;
    const second = await seedMailing(ctx.store, {
      project: first.project,
      addresses: ['e@x.test'],
      delivery: () => held(1_000),
    });
    const elsewhere = await seedMailing(ctx.store, {
      addresses: ['f@gmail.com'],
      delivery: () => held(1_000),
    });
    const state = async (seeded: { deliveries: ReadonlyArray<{ id: string }> }, i: number) => {
      const d = await ctx.store.getDelivery(seeded.deliveries[i]?.id ?? '');
      return [d?.nextAttemptAt.getTime(), d?.lastError?.endsWith(SENDER_BLOCK_RESUMED) === true];
    };
    // A destination with no pause in force: its name is its domain.
    expect(await ctx.store.removePause(p, 'destination', 'gmail.com', testTime(10))).toBeUndefined();
    expect(await state(first, 0)).toEqual([testTime(10).getTime(), true]);
    // One whose hold ended (deadline passed) is left to fail; one not held keeps its retry time.
    expect(await state(first, 1)).toEqual([testTime(5).getTime(), false]);
    expect(await state(first, 2)).toEqual([testTime(1_000).getTime(), false]);
    expect(await state(first, 3)).toEqual([testTime(1_000).getTime(), false]);
    expect(await state(elsewhere, 0)).toEqual([testTime(1_000).getTime(), false]);
    await ctx.store.removePause(p, 'broadcast', first.mailing.id, testTime(20));
    expect(await state(first, 3)).toEqual([testTime(20).getTime(), true]);
    expect(await state(second, 0)).toEqual([testTime(1_000).getTime(), false]);
    await ctx.store.removePause(p, 'project', p, testTime(30));
    expect(await state(second, 0)).toEqual([testTime(30).getTime(), true]);
    expect(await state(elsewhere, 0)).toEqual([testTime(1_000).getTime(), false]);
    const claimed = await ctx.store.claimDeliveries({ now: testTime(30), limit: 10, leaseMs: LEASE });
    expect(sorted(claimed.map((d) => d.address))).toEqual([
      'a@gmail.com',
      'b@gmail.com',
      'd@other.test',
      'e@x.test',
    ]);
  });

  it('an expired destination pause holds back nothing', async () => {
    const seeded = await seedMailing(ctx.store, { addresses: ['a@gmail.com'] });
    await ctx.store.addPause(
      makePause(seeded.project.id, {
        scope: 'destination',
        target: 'gmail.com',
        domains: ['gmail.com'],
        until: testTime(100),
      }),
      testTime(),
    );
    expect(await ctx.store.claimDeliveries({ now: testTime(99), limit: 5, leaseMs: LEASE })).toEqual([]);
    expect(await ctx.store.claimDeliveries({ now: testTime(100), limit: 5, leaseMs: LEASE })).toHaveLength(1);
  });
}
