/** Store conformance: the IdempotencyStore role. */
import { describe, expect, it } from 'vitest';
import { makeIdempotency, richVariables, testTime } from './store-fixtures.js';
import { type StoreSuiteContext, seedProject } from './store-suite-helpers.js';

/** Registers the tests of beginIdempotent, finishIdempotent and dropIdempotent. */
export function describeIdempotency(ctx: StoreSuiteContext): void {
  describe('idempotency', () => {
    it('begin creates once, then returns the record; finish stores the response', async () => {
      const { project } = await seedProject(ctx.store);
      const record = makeIdempotency(project.id, 'key-ü-1', {
        createdAt: testTime(1),
        expiresAt: testTime(86_400_001),
      });
      expect(await ctx.store.beginIdempotent(record, testTime(2))).toEqual({ created: true });
      expect(await ctx.store.beginIdempotent({ ...record, requestHash: 'other' }, testTime(3))).toEqual({
        created: false,
        existing: record,
      });
      const response = { ref: 'bc_1', status: 'queued', nested: richVariables() };
      await ctx.store.finishIdempotent(project.id, 'key-ü-1', response);
      expect(await ctx.store.beginIdempotent(record, testTime(4))).toEqual({
        created: false,
        existing: { ...record, state: 'done', response },
      });
    });

    it('an expired record is replaced; a dropped key starts afresh', async () => {
      const { project } = await seedProject(ctx.store);
      const record = makeIdempotency(project.id, 'k', { expiresAt: testTime(1_000) });
      await ctx.store.beginIdempotent(record, testTime(0));
      const fresh = makeIdempotency(project.id, 'k', {
        createdAt: testTime(1_000),
        expiresAt: testTime(2_000),
      });
      expect(await ctx.store.beginIdempotent(fresh, testTime(1_000))).toEqual({ created: true });
      expect(await ctx.store.beginIdempotent(record, testTime(1_500))).toEqual({
        created: false,
        existing: fresh,
      });
      await ctx.store.dropIdempotent(project.id, 'k');
      expect(await ctx.store.beginIdempotent(record, testTime(1_500))).toEqual({ created: true });
      await ctx.store.dropIdempotent(project.id, 'never-used');
    });

    it('keys are scoped by project', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      expect(await ctx.store.beginIdempotent(makeIdempotency(project.id, 'same'), testTime())).toEqual({
        created: true,
      });
      expect(await ctx.store.beginIdempotent(makeIdempotency(other.id, 'same'), testTime())).toEqual({
        created: true,
      });
      await ctx.store.dropIdempotent(other.id, 'same');
      const again = await ctx.store.beginIdempotent(makeIdempotency(project.id, 'same'), testTime());
      expect(again.created).toBe(false);
    });

    it('of concurrent begins with one key, exactly one is created', async () => {
      const { project } = await seedProject(ctx.store);
      const results = await Promise.all(
        Array.from({ length: ctx.concurrency }, () =>
          ctx.store.beginIdempotent(makeIdempotency(project.id, 'race'), testTime()),
        ),
      );
      expect(results.filter((r) => r.created)).toHaveLength(1);
    });
  });
}
