import { describe, expect, it } from 'vitest';
import { bucketFor, chartOf } from '../src/admin/activity-series.js';

const MINUTE = 60_000;
const at = (ms: number) => new Date(Date.UTC(2030, 0, 1) + ms);

describe('activity series', () => {
  it('picks a minute up to six hours, an hour up to fourteen days, then a day', () => {
    expect(bucketFor(6 * 60 * MINUTE)).toBe(MINUTE);
    expect(bucketFor(6 * 60 * MINUTE + 1)).toBe(60 * MINUTE);
    expect(bucketFor(14 * 24 * 60 * MINUTE)).toBe(60 * MINUTE);
    expect(bucketFor(14 * 24 * 60 * MINUTE + 1)).toBe(24 * 60 * MINUTE);
  });

  it('lays rows out on every bucket of the range, zeros included; turns are markers, other types ignored', () => {
    const rows = [
      { bucket: at(MINUTE).getTime(), type: 'email.sent', variant: null, count: 5 },
      { bucket: at(MINUTE).getTime(), type: 'email.bounced', variant: 'sender-side', count: 2 },
      { bucket: at(2 * MINUTE).getTime(), type: 'email.opened', variant: 'machine', count: 1 },
      { bucket: at(2 * MINUTE).getTime(), type: 'broadcast.completed', variant: null, count: 1 },
      { bucket: at(2 * MINUTE).getTime(), type: 'domain.verified', variant: null, count: 1 },
      // Outside the range: dropped.
      { bucket: at(9 * MINUTE).getTime(), type: 'email.sent', variant: null, count: 7 },
    ] as const;
    // `from` inside a bucket: the chart starts at that bucket's start.
    const chart = chartOf(rows, at(30_000), at(3 * MINUTE), MINUTE);
    expect(chart.from).toEqual(at(0));
    expect(chart.buckets).toEqual([0, 1, 2].map((i) => at(i * MINUTE).getTime()));
    expect(chart.series.sent).toEqual([0, 5, 0]);
    expect(chart.series['bounced.sender-side']).toEqual([0, 2, 0]);
    expect(chart.series['opened.machine']).toEqual([0, 0, 1]);
    expect(chart.series['opened.human']).toEqual([0, 0, 0]);
    expect(chart.markers).toEqual([{ at: at(2 * MINUTE).getTime(), type: 'broadcast.completed', count: 1 }]);
  });
});
