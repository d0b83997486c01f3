/** Store conformance: the DestinationLimitStore role (shared send limits as token windows). */
import { describe, expect, it } from 'vitest';
import type { TokenRequest, TokenWindow } from '../store/destination-limit-store.js';
import { tokenWindowSpan } from '../store/destination-limit-store.js';
import type { Store } from '../store/store.js';
import { testId, testTime } from './store-fixtures.js';
import type { StoreSuiteContext } from './store-suite-helpers.js';

const SECOND: TokenWindow = { windowMs: 1_000, limit: 5 };
const MINUTE: TokenWindow = { windowMs: 60_000, limit: 8 };

/** A request for `count` tokens of `key` at `testTime(offset)`. */
function take(key: string, count: number, offset: number, windows: TokenWindow[] = [SECOND]): TokenRequest {
  return { key, count, windows, now: testTime(offset) };
}

/**
 * Registers the tests of takeTokens; with `connect` (a second store on the same backend, as another
 * process would open), also the race of two instances.
 */
export function describeDestinationLimits(
  ctx: StoreSuiteContext,
  connect?: (store: Store) => Promise<Store> | Store,
): void {
  describe('takeTokens', () => {
    it('grants up to the limit, then refuses until retryAt, then grants again', async () => {
      const key = `dest:${testId('k')}`;
      expect(await ctx.store.takeTokens(take(key, 3, 0))).toEqual({ granted: 3 });
      const partial = await ctx.store.takeTokens(take(key, 4, 10));
      expect(partial.granted).toBe(2);
      const retryAt = partial.retryAt as Date;
      expect(retryAt.getTime()).toBeGreaterThan(testTime(1_000).getTime());
      // Nothing is granted before retryAt, whatever is asked.
      const early = await ctx.store.takeTokens(take(key, 1, retryAt.getTime() - testTime().getTime() - 1));
      expect(early.granted).toBe(0);
      expect(early.retryAt).toEqual(retryAt);
      expect(await ctx.store.takeTokens(take(key, 1, retryAt.getTime() - testTime().getTime()))).toEqual({
        granted: 1,
      });
    });

    it('no interval of a window and one bucket holds more than the limit', async () => {
      const key = `dest:${testId('k')}`;
      const grants: number[] = [];
      // Asks every 20 ms for 3 seconds, one token at a time.
      for (let t = 0; t < 3_000; t += 20) {
        const { granted } = await ctx.store.takeTokens(take(key, 1, t));
        for (let i = 0; i < granted; i++) grants.push(t);
      }
      const { bucketMs } = tokenWindowSpan(SECOND.windowMs, testTime());
      for (const start of grants) {
        const inside = grants.filter((t) => t >= start && t < start + SECOND.windowMs + bucketMs);
        expect(inside.length).toBeLessThanOrEqual(SECOND.limit);
      }
      // ...and the limit is reached: 3 s hold at least two windows' worth.
      expect(grants.length).toBeGreaterThanOrEqual(2 * SECOND.limit);
    });

    it('every window must have room; keys are counted apart', async () => {
      const key = `dest:${testId('k')}`;
      const other = `dest:${testId('k')}`;
      const both = [SECOND, MINUTE];
      expect((await ctx.store.takeTokens(take(key, 5, 0, both))).granted).toBe(5);
      // The second refuses now; two seconds later it has room again, but the minute has 3 left.
      expect((await ctx.store.takeTokens(take(key, 1, 100, both))).granted).toBe(0);
      const later = await ctx.store.takeTokens(take(key, 5, 2_000, both));
      expect(later.granted).toBe(3);
      expect((later.retryAt as Date).getTime()).toBeGreaterThan(testTime(60_000).getTime());
      expect(await ctx.store.takeTokens(take(other, 5, 2_000, both))).toEqual({ granted: 5 });
      // A limit of 0 grants nothing.
      const none = await ctx.store.takeTokens(take(other, 1, 2_000, [{ windowMs: 1_000, limit: 0 }]));
      expect(none.granted).toBe(0);
      expect(none.retryAt).toBeInstanceOf(Date);
    });

    it('concurrent takers of one key never get more than the limit in all', async () => {
      const key = `dest:${testId('k')}`;
      const window: TokenWindow = { windowMs: 60_000, limit: 10 };
      const results = await Promise.all(
        Array.from({ length: ctx.concurrency }, () => ctx.store.takeTokens(take(key, 3, 5, [window]))),
      );
      const granted = results.reduce((sum, r) => sum + r.granted, 0);
      expect(granted).toBe(Math.min(10, 3 * ctx.concurrency));
    });

    describe(connect ? 'across processes' : 'across processes (skipped: no `connect` option)', () => {
      it.skipIf(!connect)('takers on two instances never get more than the limit in all', async () => {
        const other = await (connect as (store: Store) => Promise<Store> | Store)(ctx.store);
        await other.init();
        try {
          const key = `dest:${testId('k')}`;
          const window: TokenWindow = { windowMs: 60_000, limit: 25 };
          const results = await Promise.all(
            Array.from({ length: ctx.concurrency * 2 }, (_, i) =>
              (i % 2 === 0 ? ctx.store : other).takeTokens(take(key, 2, 5, [window])),
            ),
          );
          const granted = results.reduce((sum, r) => sum + r.granted, 0);
          expect(granted).toBe(Math.min(25, 4 * ctx.concurrency));
        } finally {
          await other.close();
        }
      });
    });
  });
}
