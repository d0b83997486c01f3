/** Store conformance: the event outbox counted over time (`ActivityStore.countEventSeries`). */
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
}
