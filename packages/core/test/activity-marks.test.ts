import { describe, expect, it } from 'vitest';
import { guardLines } from '../src/admin/activity-guard.js';
import { bandConcerns, pauseBands } from '../src/admin/activity-pauses.js';
import { ACTIVITY_SERIES, type ActivitySeriesName } from '../src/admin/activity-series.js';
import type { EventRecord, PauseEventData } from '../src/store/event-records.js';

const MINUTE = 60_000;
const at = (ms: number) => new Date(Date.UTC(2030, 0, 1) + ms);

function pauseEvent(
  type: 'broadcast.paused' | 'broadcast.resumed',
  ms: number,
  pause: Partial<PauseEventData> = {},
): EventRecord {
  return {
    id: `evt_${ms}_${type}`,
    projectId: 'prj',
    type,
    mailingRef: null,
    deliveryId: null,
    address: null,
    createdAt: at(ms),
    data: {
      event_id: `evt_${ms}`,
      project_id: 'prj',
      pause: { scope: 'broadcast', target: 'brd_a', by: 'operator', reason: null, ...pause },
    },
  };
}

function series(values: Partial<Record<ActivitySeriesName, number[]>>, n: number) {
  return Object.fromEntries(
    ACTIVITY_SERIES.map((name) => [name, values[name] ?? Array.from({ length: n }, () => 0)]),
  ) as Record<ActivitySeriesName, number[]>;
}

describe('pause bands', () => {
  const from = at(0);
  const to = at(60 * MINUTE);

  it('pairs each pause with its resume; a timed one ends at its until; one in force runs to the end', () => {
    const bands = pauseBands(
      [
        pauseEvent('broadcast.paused', MINUTE, { reason: 'look' }),
        pauseEvent('broadcast.resumed', 3 * MINUTE),
        pauseEvent('broadcast.paused', 5 * MINUTE, {
          scope: 'destination',
          target: 'gmail.com',
          domains: ['gmail.com'],
          by: 'guard',
          until: at(35 * MINUTE).toISOString(),
        }),
        // Paused again after its timed end: a new band, resumed before its own end.
        pauseEvent('broadcast.paused', 40 * MINUTE, {
          scope: 'destination',
          target: 'gmail.com',
          domains: ['gmail.com'],
          until: at(55 * MINUTE).toISOString(),
        }),
        pauseEvent('broadcast.resumed', 45 * MINUTE, { scope: 'destination', target: 'gmail.com' }),
        pauseEvent('broadcast.paused', 50 * MINUTE, { scope: 'project', target: 'prj' }),
      ],
      [],
      from,
      to,
    );
    expect(bands.map((b) => [b.scope, b.from, b.to, b.ended, b.by])).toEqual([
      ['broadcast', at(MINUTE), at(3 * MINUTE), 'operator', 'operator'],
      ['destination', at(5 * MINUTE), at(35 * MINUTE), 'timed', 'guard'],
      ['destination', at(40 * MINUTE), at(45 * MINUTE), 'operator', 'operator'],
      ['project', at(50 * MINUTE), null, null, 'operator'],
    ]);
    expect(bands[0]?.reason).toBe('look');
  });

  it('starts at the period for pauses begun before it: resumed in it, or in force now', () => {
    const active = [
      {
        scope: 'project' as const,
        target: 'prj',
        domains: [],
        by: 'operator' as const,
        reason: 'holiday',
        rule: null,
        createdAt: at(-MINUTE),
        until: null,
      },
    ];
    const bands = pauseBands([pauseEvent('broadcast.resumed', 2 * MINUTE)], active, from, to);
    expect(bands.map((b) => [b.scope, b.from, b.to, b.startedBefore, b.by])).toEqual([
      ['broadcast', from, at(2 * MINUTE), true, null],
      ['project', from, null, true, 'operator'],
    ]);
  });

  it("keeps a broadcast's own pauses on its chart and a destination's on that destination's", () => {
    const [mine, other, group] = pauseBands(
      [
        pauseEvent('broadcast.paused', 0),
        pauseEvent('broadcast.paused', MINUTE, { target: 'brd_b' }),
        pauseEvent('broadcast.paused', 2 * MINUTE, {
          scope: 'destination',
          target: 'microsoft',
          domains: ['hotmail.fr', 'outlook.com'],
        }),
      ],
      [],
      from,
      to,
    );
    if (!(mine && other && group)) throw new Error('three bands');
    expect(bandConcerns(mine, { mailingRef: 'brd_a' })).toBe(true);
    expect(bandConcerns(other, { mailingRef: 'brd_a' })).toBe(false);
    expect(bandConcerns(group, { mailingRef: 'brd_a' })).toBe(true);
    expect(bandConcerns(group, { domains: ['hotmail.*'] })).toBe(true);
    expect(bandConcerns(group, { domains: ['gmail.com'] })).toBe(false);
    expect(bandConcerns(other, { domains: ['gmail.com'] })).toBe(true);
  });
});

describe('guard lines', () => {
  it("counts a broadcast's rules over its life, afresh from a resume, as the guard does", () => {
    const s = series(
      { sent: [10, 10, 10, 10], complained: [1, 1, 0, 1], 'bounced.recipient-hard': [0, 2, 0, 0] },
      4,
    );
    const [hard, complaints] = guardLines(
      s,
      MINUTE,
      { broadcast: { complaintMin: 2, hardBounceMinAttempts: 20 } },
      { resumedAt: new Set([2]) },
    );
    expect(complaints?.counts).toEqual([1, 2, 0, 1]);
    expect(complaints?.attempts).toEqual([10, 20, 10, 20]);
    // min(rate / 0.1 %, count / 2): 1 of 10 is far above, 1 of the minimum 2 is half.
    expect(complaints?.levels).toEqual([0.5, 1, 0, 0.5]);
    // 2 of 20 is 10 %, twice the 5 % threshold, and 20 attempted is the minimum: 100 %.
    expect(hard?.levels[1]).toBe(1);
  });

  it("counts a destination's rule over its rolling window, a bucket at least; none when the guard is off", () => {
    const s = series({ sent: [10, 10, 10, 10], 'bounced.sender-side': [4, 0, 0, 4] }, 4);
    const [line] = guardLines(s, 5 * MINUTE, { destination: { windowMs: 15 * MINUTE } }, undefined);
    expect(line?.counts).toEqual([4, 4, 4, 4]);
    expect(line?.attempts).toEqual([10, 20, 30, 30]);
    expect(line?.basis).toBe(15 * MINUTE);
    const [hourly] = guardLines(s, 60 * MINUTE, undefined, undefined);
    expect(hourly?.counts).toEqual([4, 0, 0, 4]);
    expect(hourly?.basis).toBe(60 * MINUTE);
    expect(guardLines(s, MINUTE, false, undefined)).toEqual([]);
  });
});
