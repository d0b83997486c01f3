import { describe, expect, it } from 'vitest';
import { createHeldPauses } from '../src/pauses/held-pauses.js';
import { createLastSends, createWindowCounts } from '../src/pauses/outcome-windows.js';

describe("the reputation guard's in-process counters", () => {
  it('a rolling window drops what left it, bucket by bucket', () => {
    const w = createWindowCounts(30_000);
    w.add(0, false);
    w.add(500, true);
    w.add(15_000, true);
    expect(w.totals(15_000)).toEqual({ attempts: 3, refusals: 2 });
    // 31 s on, the first bucket (0-1 s) has left the window; 15 s is still in it.
    expect(w.totals(31_000)).toEqual({ attempts: 1, refusals: 1 });
    expect(w.totals(200_000)).toEqual({ attempts: 0, refusals: 0 });
    w.add(200_000, true);
    expect(w.totals(200_000)).toEqual({ attempts: 1, refusals: 1 });
  });

  it('the last sends of a project: a ring of `size`, none older than the age limit', () => {
    const s = createLastSends(4, 10_000);
    for (const hard of [true, false, false, true, true]) s.add(hard, 1_000);
    expect([s.sends, s.hard]).toEqual([4, 2]);
    s.add(false, 20_000);
    expect([s.sends, s.hard, s.since]).toEqual([1, 0, 20_000]);
  });

  it("held pauses: the store's list, and this process's own until a later read lists it", () => {
    const held = createHeldPauses();
    expect(held.held('p1', 'm1', 'a@example.test')).toBe(false);
    held.hold({ projectId: 'p1', scope: 'destination', destination: 'example.test' });
    expect(held.held('p1', 'm2', 'b@example.test')).toBe(true);
    expect(held.held('p1', 'm2', 'b@other.test')).toBe(false);
    held.written({ projectId: 'p1', scope: 'destination', destination: 'example.test' }, 1_000);
    // A read begun before the write ended does not drop it...
    held.replace('p1', [], 900);
    expect(held.heldDomain('p1', 'example.test')).toBe(true);
    // ...one begun after it does (the pause was lifted meanwhile).
    held.replace('p1', [], 1_100);
    expect(held.heldDomain('p1', 'example.test')).toBe(false);
    held.replace(
      'p1',
      [
        {
          projectId: 'p1',
          scope: 'broadcast',
          target: 'm1',
          domains: [],
          by: 'guard',
          reason: null,
          rule: null,
          createdAt: new Date(0),
          until: null,
        },
      ],
      2_000,
    );
    expect(held.held('p1', 'm1', 'a@example.test')).toBe(true);
    expect(held.held('p1', 'm2', 'a@example.test')).toBe(false);
  });
});
