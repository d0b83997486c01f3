/** Store conformance: the event outbox over time (`ActivityStore.countEventSeries`, `listEventsBetween`). */
import { expect, it } from 'vitest';
import type { EventSeriesRow } from '../store/activity-store.js';
import type { EventRecord } from '../store/event-records.js';
import { testTime } from './store-fixtures.js';
import { makeEvent } from './store-suite-events.js';
import { type StoreSuiteContext, seedProject } from './store-suite-helpers.js';

const MINUTE = 60_000;

/** Rows in one order, for comparison. */
function sorted(rows: EventSeriesRow[]): EventSeriesRow[] {
  const keyOf = (r: EventSeriesRow) => `${r.bucket}|${r.type}|${r.variant ?? ''}`;
  return [...rows].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
}

export function describeActivity(ctx: StoreSuiteContext): void {
  /** A project with events: sends over three minutes, bounces of each class, opens and clicks of both kinds. */
  const seed = async () => {
    const { project } = await seedProject(ctx.store);
    const { project: other } = await seedProject(ctx.store);
    const at = (ms: number) => testTime(ms);
    const events: EventRecord[] = [
      makeEvent(project.id, { createdAt: at(0), mailingRef: 'brd_a', address: 'a@gmail.com' }),
      makeEvent(project.id, { createdAt: at(59_999), mailingRef: 'brd_a', address: 'b@yahoo.com' }),
      makeEvent(project.id, { createdAt: at(MINUTE), mailingRef: 'brd_a', address: 'c@gmail.com' }),
      makeEvent(project.id, { createdAt: at(2 * MINUTE), mailingRef: 'brd_b', address: 'd@gmail.com' }),
      ...(['recipient-hard', 'soft', 'sender-side', 'recipient-hard'] as const).map((cls, i) =>
        makeEvent(project.id, {
          type: 'email.bounced',
          createdAt: at(MINUTE + i),
          mailingRef: 'brd_a',
          address: `x${i}@GMAIL.com`.replace('GMAIL', 'gmail'),
          data: {
            event_id: `e${i}`,
            project_id: project.id,
            bounce: { reason: 'userunknown', class: cls, status: '5.1.1', diagnostic: null, source: 'dsn' },
          },
        }),
      ),
      ...[true, false, false].map((machine, i) =>
        makeEvent(project.id, {
          type: i === 2 ? 'email.clicked' : 'email.opened',
          createdAt: at(2 * MINUTE + i),
          mailingRef: 'brd_a',
          address: 'a@gmail.com',
          data: { event_id: `o${i}`, project_id: project.id, machine },
        }),
      ),
      // No machine flag at all: a person.
      makeEvent(project.id, {
        type: 'email.opened',
        createdAt: at(2 * MINUTE + 5),
        mailingRef: 'brd_a',
        address: 'b@yahoo.com',
        data: { event_id: 'o9', project_id: project.id },
      }),
      // Outside the range, and another project's.
      makeEvent(project.id, { createdAt: at(10 * MINUTE), mailingRef: 'brd_a', address: 'a@gmail.com' }),
      makeEvent(other.id, { createdAt: at(0), mailingRef: 'brd_a', address: 'a@gmail.com' }),
    ];
    await ctx.store.insertOutbox({ events, messages: [] });
    return { project, range: { from: at(0), to: at(10 * MINUTE), bucketMs: MINUTE } };
  };

  it('countEventSeries counts per bucket, type and variant, in [from, to), one project only', async () => {
    const { project, range } = await seed();
    const rows = await ctx.store.countEventSeries(project.id, range);
    const t = (ms: number) => testTime(ms).getTime();
    expect(sorted(rows)).toEqual(
      sorted([
        { bucket: t(0), type: 'email.sent', variant: null, count: 2 },
        { bucket: t(MINUTE), type: 'email.sent', variant: null, count: 1 },
        { bucket: t(2 * MINUTE), type: 'email.sent', variant: null, count: 1 },
        { bucket: t(MINUTE), type: 'email.bounced', variant: 'recipient-hard', count: 2 },
        { bucket: t(MINUTE), type: 'email.bounced', variant: 'soft', count: 1 },
        { bucket: t(MINUTE), type: 'email.bounced', variant: 'sender-side', count: 1 },
        { bucket: t(2 * MINUTE), type: 'email.opened', variant: 'machine', count: 1 },
        { bucket: t(2 * MINUTE), type: 'email.opened', variant: 'human', count: 2 },
        { bucket: t(2 * MINUTE), type: 'email.clicked', variant: 'human', count: 1 },
      ]),
    );
  });

  it('countEventSeries filters by mailing and by the domains of a destination', async () => {
    const { project, range } = await seed();
    const t = (ms: number) => testTime(ms).getTime();
    const ofB = await ctx.store.countEventSeries(project.id, { ...range, mailingRef: 'brd_b' });
    expect(ofB).toEqual([{ bucket: t(2 * MINUTE), type: 'email.sent', variant: null, count: 1 }]);
    const yahoo = await ctx.store.countEventSeries(project.id, { ...range, domains: ['yahoo.com'] });
    expect(sorted(yahoo)).toEqual(
      sorted([
        { bucket: t(0), type: 'email.sent', variant: null, count: 1 },
        { bucket: t(2 * MINUTE), type: 'email.opened', variant: 'human', count: 1 },
      ]),
    );
    // A domain is matched after the `@` only: `mail.gmail.com` is not `gmail.com`.
    const sent = await ctx.store.countEventSeries(project.id, {
      ...range,
      mailingRef: 'brd_a',
      domains: ['gmail.com', 'mail.yahoo.com'],
    });
    expect(sent.reduce((n, r) => n + r.count, 0)).toBe(2 + 4 + 3);
    expect(await ctx.store.countEventSeries(project.id, { ...range, domains: [] })).toEqual([]);
  });

  it('countEventSeries buckets by the given width (an hour holds every minute)', async () => {
    const { project } = await seed();
    const hour = 3_600_000;
    const from = testTime(-hour);
    const rows = await ctx.store.countEventSeries(project.id, {
      from,
      to: testTime(hour),
      bucketMs: hour,
      mailingRef: 'brd_a',
    });
    const buckets = new Set(rows.map((r) => r.bucket));
    expect(buckets.size).toBeLessThanOrEqual(2);
    for (const b of buckets) expect(b % hour).toBe(0);
    expect(rows.filter((r) => r.type === 'email.sent').reduce((n, r) => n + r.count, 0)).toBe(4);
  });

  it('countEventSeries matches a group pattern `name.*` as the name and a dot, then anything', async () => {
    const { project } = await seedProject(ctx.store);
    const at = testTime(0);
    const addresses = [
      'a@hotmail.com',
      'b@hotmail.co.uk',
      'c@hotmailxcom.test',
      'd@my.hotmail.com',
      'e@h_tmail.com',
    ];
    await ctx.store.insertOutbox({
      events: addresses.map((address) => makeEvent(project.id, { createdAt: at, address })),
      messages: [],
    });
    const count = async (domains: string[]) =>
      (
        await ctx.store.countEventSeries(project.id, {
          from: at,
          to: testTime(MINUTE),
          bucketMs: MINUTE,
          domains,
        })
      ).reduce((n, r) => n + r.count, 0);
    expect(await count(['hotmail.*'])).toBe(2);
    // `_` is a letter here, not LIKE's wildcard.
    expect(await count(['h_tmail.*'])).toBe(1);
    expect(await count(['hotmail.*', 'my.hotmail.com'])).toBe(3);
  });

  it('listEventsBetween lists the types asked for in [from, to), earliest first, one project only', async () => {
    const { project } = await seedProject(ctx.store);
    const { project: other } = await seedProject(ctx.store);
    const pause = (
      projectId: string,
      ms: number,
      type: 'broadcast.paused' | 'broadcast.resumed',
      ref = 'brd_a',
    ) =>
      makeEvent(projectId, {
        type,
        createdAt: testTime(ms),
        mailingRef: ref,
        data: {
          event_id: `${type}${ms}`,
          project_id: projectId,
          pause: { scope: 'broadcast', target: ref, by: 'operator', reason: 'look', rule: null, until: null },
        },
      });
    const resumed = pause(project.id, 2 * MINUTE, 'broadcast.resumed');
    const paused = pause(project.id, MINUTE, 'broadcast.paused');
    const projectPause = makeEvent(project.id, { type: 'broadcast.paused', createdAt: testTime(3 * MINUTE) });
    await ctx.store.insertOutbox({
      events: [
        resumed,
        paused,
        projectPause,
        pause(project.id, 10 * MINUTE, 'broadcast.paused'),
        pause(project.id, -1, 'broadcast.paused'),
        pause(other.id, MINUTE, 'broadcast.paused'),
        makeEvent(project.id, { createdAt: testTime(MINUTE), mailingRef: 'brd_a', address: 'a@gmail.com' }),
      ],
      messages: [],
    });
    const range = { from: testTime(0), to: testTime(10 * MINUTE), limit: 100 };
    const types = ['broadcast.paused', 'broadcast.resumed'] as const;
    const listed = await ctx.store.listEventsBetween(project.id, { ...range, types });
    expect(listed.map((e) => e.id)).toEqual([paused.id, resumed.id, projectPause.id]);
    expect(listed[0]).toEqual(paused);
    const ofA = await ctx.store.listEventsBetween(project.id, { ...range, types, mailingRef: 'brd_a' });
    expect(ofA.map((e) => e.id)).toEqual([paused.id, resumed.id]);
    expect(
      (await ctx.store.listEventsBetween(project.id, { ...range, types, limit: 1 })).map((e) => e.id),
    ).toEqual([paused.id]);
    expect(await ctx.store.listEventsBetween(project.id, { ...range, types: [] })).toEqual([]);
  });
}
