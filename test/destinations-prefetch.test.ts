import { type DestinationLimitStore, type Logger, silentLogger, type TokenRequest } from '@mailroom/core';
import { memoryStore } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { describe, expect, it } from 'vitest';
import { createDestinationGate } from '../packages/core/src/delivery/destination-gate.js';
import { prefetchExpiry } from '../packages/core/src/delivery/token-prefetch.js';
import { missingServerTest, testServer } from '../packages/sql/test/support/servers.js';
import { pgTestSchema } from './support/pg-admin.js';

const PG = await testServer('postgres');

const quiet: Logger = silentLogger;

/** A store that records the takes asked of it in `calls`. */
function countingStore(store: DestinationLimitStore, calls: TokenRequest[]): DestinationLimitStore {
  return {
    takeTokens(request) {
      calls.push(request);
      return store.takeTokens(request);
    },
  };
}

/**
 * Two gates (two workers) on one store and one clock, each admitting `perStep` sends to google every
 * 5 ms for `ms`; answers the times of the sends that went, and the takes asked of the store.
 */
async function drive(
  perSecond: number,
  perStep: number,
  ms: number,
  stores: DestinationLimitStore[] = [memoryStore()],
) {
  let t = Date.UTC(2026, 10, 26, 12, 0, 0, 3);
  const clock = { now: () => new Date(t) };
  // One list of takes for both workers, whether they share a store object or have one each.
  const calls: TokenRequest[] = [];
  const gates = [0, 1].map((i) =>
    createDestinationGate(
      { limits: { google: { perSecond, perDay: 1_000_000_000 } } },
      {
        store: countingStore((stores[i] ?? stores[0]) as DestinationLimitStore, calls),
        clock,
        logger: quiet,
        concurrency: 100,
      },
    ),
  );
  const sent: number[] = [];
  const start = t;
  while (t - start < ms) {
    const admissions = await Promise.all(
      gates.flatMap((gate) => Array.from({ length: perStep }, () => gate.admit('google'))),
    );
    for (const a of admissions) {
      if (!a.go) continue;
      sent.push(t);
      a.done('ok');
    }
    t += 5;
  }
  return { sent, calls, start, end: t, gates, clock, setTime: (at: number) => (t = at) };
}

/** The most sends in any `span` ms. */
function maxIn(sent: number[], span: number): number {
  let best = 0;
  let from = 0;
  for (let i = 0; i < sent.length; i++) {
    while ((sent[i] as number) - (sent[from] as number) >= span) from++;
    best = Math.max(best, i - from + 1);
  }
  return best;
}

describe('destination tokens taken ahead (prefetch)', () => {
  it('tokens taken ahead are usable to the end of the current bucket of every window, at most a second', () => {
    const t = Date.UTC(2026, 10, 26, 12, 0, 0, 130);
    expect(prefetchExpiry([{ windowMs: 1_000, limit: 10 }], t)).toBe(t - 130 + 250);
    expect(prefetchExpiry([{ windowMs: 60_000, limit: 10 }], t)).toBe(t + 1_000);
    expect(
      prefetchExpiry(
        [
          { windowMs: 86_400_000, limit: 10 },
          { windowMs: 1_000, limit: 10 },
        ],
        t,
      ),
    ).toBe(t - 130 + 250);
  });

  it('limits far above the rate: one store take per bucket or so, not one per few sends', async () => {
    const { sent, calls, start } = await drive(1_000_000, 3, 3_000);
    expect(sent).toHaveLength(2 * 3 * 600);
    // The first 250 ms measure the rate (a take per step and worker, as without prefetch); after that,
    // a take per worker per bucket of 250 ms: 12 buckets in the 2,750 ms left, 13 counting a partial one.
    const first = calls.filter((c) => c.now.getTime() < start + 250);
    expect(first.length).toBeGreaterThan(50);
    expect(calls.length - first.length).toBeLessThanOrEqual(2 * 13);
  });

  it('two workers taking ahead never exceed a binding limit together, in any window plus its margin', async () => {
    const { sent, calls } = await drive(400, 3, 5_000);
    expect(sent.length).toBeGreaterThan(400 * 3);
    // A token is used in the bucket it is counted in: no 1,250 ms hold more than the limit.
    expect(maxIn(sent, 1_250)).toBeLessThanOrEqual(400);
    // Takes ahead were asked (more than the sends waiting), yet capped at half a bucket's share.
    expect(calls.some((c) => c.count > 3)).toBe(true);
    expect(Math.max(...calls.map((c) => c.count))).toBeLessThanOrEqual(3 + 50);
  });

  it('small limits are never taken ahead; tokens unused by the end of their bucket are dropped', async () => {
    const small = await drive(5, 2, 2_000);
    expect(Math.max(...small.calls.map((c) => c.count))).toBeLessThanOrEqual(2);
    expect(maxIn(small.sent, 1_250)).toBeLessThanOrEqual(5);

    const run = await drive(1_000_000, 3, 1_000);
    const gate = run.gates[0] as ReturnType<typeof createDestinationGate>;
    // At the start of a bucket, one send: the take asks for it and for the rest of the bucket.
    const bucket = Math.ceil(run.end / 250) * 250;
    run.setTime(bucket + 3);
    expect((await gate.admit('google')).go).toBe(true);
    const taken = run.calls.at(-1) as TokenRequest;
    expect(taken.count).toBeGreaterThan(50);
    // Within the bucket the tokens held serve the sends; the store is not asked.
    run.setTime(bucket + 249);
    expect((await gate.admit('google')).go).toBe(true);
    expect(run.calls.at(-1)).toBe(taken);
    // From the next bucket on, they are gone: the next send asks the store.
    run.setTime(bucket + 250);
    expect((await gate.admit('google')).go).toBe(true);
    expect(run.calls.at(-1)).not.toBe(taken);
    expect(run.calls.at(-1)?.now.getTime()).toBe(bucket + 250);
  });
});

describe('destination tokens taken ahead, on PostgreSQL', () => {
  if (PG.problem !== undefined) {
    missingServerTest(PG, 'destination prefetch on PostgreSQL');
    return;
  }

  it('two workers with stores of their own, taking ahead, never exceed a binding limit together', {
    timeout: 60_000,
  }, async () => {
    const { url, drop } = await pgTestSchema(PG.url, 'mr_prefetch');
    const stores = [sqlStore({ url, poolSize: 2 }), sqlStore({ url, poolSize: 2 })];
    try {
      await Promise.all(stores.map((s) => s.init()));
      const { sent, calls } = await drive(400, 3, 3_000, stores);
      expect(sent.length).toBeGreaterThan(600);
      expect(maxIn(sent, 1_250)).toBeLessThanOrEqual(400);
      expect(calls.some((c) => c.count > 3)).toBe(true);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await drop();
    }
  });
});
