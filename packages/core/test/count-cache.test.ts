import { describe, expect, it } from 'vitest';
import { createCountCache } from '../src/admin/count-cache.js';
import type { DeliveryCounts } from '../src/store/mailing-store.js';

/** Counts with `sent` deliveries (other statuses 0), as a store answers them. */
function countsOf(sent: number): DeliveryCounts {
  return { queued: 0, sending: 0, sent, failed: 0, suppressed: 0, skipped: 0, bounced: 0, complained: 0 };
}

/** A counter standing for the store: how many counts ran, and what each mailing holds now. */
function fakeStore(sizes: Record<string, number>) {
  const calls: string[] = [];
  return {
    calls,
    sizes,
    count: async (id: string) => {
      calls.push(id);
      return countsOf(sizes[id] ?? 0);
    },
  };
}

describe('count cache of the status reads', () => {
  it('reuses a large mailing’s count within ttlMs, then counts again', async () => {
    let t = 0;
    const store = fakeStore({ big: 20_000 });
    const cache = createCountCache(store.count, { ttlMs: 1000, minTotal: 10_000, now: () => t });
    expect((await cache.counts('big')).sent).toBe(20_000);
    store.sizes.big = 20_500;
    t = 999;
    expect((await cache.counts('big')).sent).toBe(20_000);
    expect(store.calls).toHaveLength(1);
    t = 1000;
    expect((await cache.counts('big')).sent).toBe(20_500);
    expect(store.calls).toHaveLength(2);
  });

  it('counts a small mailing on every read', async () => {
    const store = fakeStore({ small: 3 });
    const cache = createCountCache(store.count, { ttlMs: 1000, minTotal: 10_000, now: () => 0 });
    await cache.counts('small');
    store.sizes.small = 4;
    expect((await cache.counts('small')).sent).toBe(4);
    expect(store.calls).toHaveLength(2);
  });

  it('shares a count in flight among concurrent reads, and forget() makes the next read fresh', async () => {
    let t = 0;
    const store = fakeStore({ big: 50_000 });
    const cache = createCountCache(store.count, { ttlMs: 1000, minTotal: 10_000, now: () => t });
    await cache.counts('big');
    t = 2000;
    const reads = await Promise.all([cache.counts('big'), cache.counts('big'), cache.counts('big')]);
    expect(reads.map((c) => c.sent)).toEqual([50_000, 50_000, 50_000]);
    expect(store.calls).toHaveLength(2);
    store.sizes.big = 40_000;
    cache.forget('big');
    expect((await cache.counts('big')).sent).toBe(40_000);
    expect(store.calls).toHaveLength(3);
  });

  it('does not keep a failed count', async () => {
    let fail = true;
    const cache = createCountCache(
      async () => {
        if (fail) throw new Error('database gone');
        return countsOf(20_000);
      },
      { now: () => 0 },
    );
    await expect(cache.counts('big')).rejects.toThrow('database gone');
    fail = false;
    expect((await cache.counts('big')).sent).toBe(20_000);
  });
});
