/** Store conformance: the KeyStore role (a project's API keys: list, revoke, rotate, last use). */
import { describe, expect, it } from 'vitest';
import { makeSecret, testId, testTime } from './store-fixtures.js';
import { expectStoreError, type StoreSuiteContext, seedProject } from './store-suite-helpers.js';

/** Registers the tests of listKeys, getKey, revokeKey, rotateKey and touchKey. */
export function describeKeys(ctx: StoreSuiteContext): void {
  describe('keys', () => {
    it('a scoped key round-trips exactly through addProjectSecret, findSecret, getKey and listKeys', async () => {
      const { project, secret } = await seedProject(ctx.store);
      const scoped = makeSecret(project.id, {
        scope: 'sending',
        domains: ['example.com', 'mail.example.org'],
        prefix: 'sk_live_AbCd',
        name: 'Marketing site — “spring” ✓',
        createdAt: testTime(1000),
      });
      const read = makeSecret(project.id, { scope: 'read', mode: 'sandbox', createdAt: testTime(2000) });
      await ctx.store.addProjectSecret(read);
      await ctx.store.addProjectSecret(scoped);
      expect(await ctx.store.findSecret(scoped.hash)).toEqual({ project, secret: scoped });
      expect(await ctx.store.getKey(project.id, scoped.id)).toEqual(scoped);
      expect(await ctx.store.listKeys(project.id)).toEqual([secret, scoped, read]);
      // A key made without a name reads back with none (null), on every adapter.
      expect((await ctx.store.getKey(project.id, read.id))?.name).toBeNull();
    });

    it("another project's key is neither listed nor found by id", async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other, secret: otherKey } = await seedProject(ctx.store);
      expect(await ctx.store.getKey(project.id, otherKey.id)).toBeUndefined();
      expect(await ctx.store.getKey(project.id, 'key_missing')).toBeUndefined();
      expect((await ctx.store.listKeys(project.id)).map((k) => k.id)).not.toContain(otherKey.id);
      expect(await ctx.store.listKeys(other.id)).toEqual([otherKey]);
    });

    it('a key id is unique: a second key with the same id is CONFLICT and not stored', async () => {
      const { project, secret } = await seedProject(ctx.store);
      const clash = makeSecret(project.id, { id: secret.id });
      await expectStoreError(ctx.store.addProjectSecret(clash), 'CONFLICT');
      expect(await ctx.store.findSecret(clash.hash)).toBeUndefined();
    });

    it('revokeKey sets revokedAt once; a later revocation keeps the first time', async () => {
      const { project, secret } = await seedProject(ctx.store);
      const first = await ctx.store.revokeKey(project.id, secret.id, testTime(5000));
      expect(first).toEqual({ ...secret, revokedAt: testTime(5000) });
      const again = await ctx.store.revokeKey(project.id, secret.id, testTime(9000));
      expect(again?.revokedAt).toEqual(testTime(5000));
      expect((await ctx.store.findSecret(secret.hash))?.secret.revokedAt).toEqual(testTime(5000));
    });

    it("revokeKey of another project's key or an unknown id changes nothing and gives undefined", async () => {
      const { project } = await seedProject(ctx.store);
      const { secret: otherKey } = await seedProject(ctx.store);
      expect(await ctx.store.revokeKey(project.id, otherKey.id, testTime(1))).toBeUndefined();
      expect(await ctx.store.revokeKey(project.id, 'key_missing', testTime(1))).toBeUndefined();
      expect((await ctx.store.findSecret(otherKey.hash))?.secret.revokedAt).toBeNull();
    });

    it('concurrent revocations of one key all answer the one time that was stored', async () => {
      const { project, secret } = await seedProject(ctx.store);
      const results = await Promise.all(
        Array.from({ length: ctx.concurrency }, (_, i) =>
          ctx.store.revokeKey(project.id, secret.id, testTime(1000 + i)),
        ),
      );
      const stored = (await ctx.store.getKey(project.id, secret.id))?.revokedAt;
      expect(stored).toBeInstanceOf(Date);
      for (const result of results) expect(result?.revokedAt).toEqual(stored);
    });

    it('rotateKey ends the old key at expiresAt, links it, and stores the replacement', async () => {
      const { project, secret } = await seedProject(ctx.store);
      const replacement = makeSecret(project.id, { scope: secret.scope, createdAt: testTime(100) });
      const rotated = await ctx.store.rotateKey(
        project.id,
        secret.id,
        replacement,
        testTime(3_600_000),
        testTime(100),
      );
      expect(rotated).toBe(true);
      expect(await ctx.store.getKey(project.id, secret.id)).toEqual({
        ...secret,
        expiresAt: testTime(3_600_000),
        replacedBy: replacement.id,
      });
      expect(await ctx.store.findSecret(replacement.hash)).toEqual({ project, secret: replacement });
    });

    it('rotateKey refuses, writing nothing, a replaced, revoked, expired, unknown or foreign key', async () => {
      const { project, secret } = await seedProject(ctx.store);
      const { secret: foreign } = await seedProject(ctx.store);
      const rotate = (id: string, now = testTime(10)) => {
        const replacement = makeSecret(project.id);
        return ctx.store
          .rotateKey(project.id, id, replacement, testTime(1_000_000), now)
          .then(async (ok) => ({ ok, stored: await ctx.store.findSecret(replacement.hash) }));
      };
      expect((await rotate(secret.id)).ok).toBe(true);
      const replaced = await rotate(secret.id);
      expect(replaced).toEqual({ ok: false, stored: undefined });

      const revoked = makeSecret(project.id);
      await ctx.store.addProjectSecret(revoked);
      await ctx.store.revokeKey(project.id, revoked.id, testTime(5));
      expect(await rotate(revoked.id)).toEqual({ ok: false, stored: undefined });

      const expiring = makeSecret(project.id, { expiresAt: testTime(50) });
      await ctx.store.addProjectSecret(expiring);
      expect(await rotate(expiring.id, testTime(50))).toEqual({ ok: false, stored: undefined });
      expect(await rotate('key_missing')).toEqual({ ok: false, stored: undefined });
      expect(await rotate(foreign.id)).toEqual({ ok: false, stored: undefined });
      expect((await ctx.store.findSecret(foreign.hash))?.secret.replacedBy).toBeNull();
    });

    it('concurrent rotations of one key: exactly one succeeds, and only its replacement is stored', async () => {
      const { project, secret } = await seedProject(ctx.store);
      const replacements = Array.from({ length: ctx.concurrency }, () => makeSecret(project.id));
      const results = await Promise.all(
        replacements.map((replacement) =>
          ctx.store.rotateKey(project.id, secret.id, replacement, testTime(60_000), testTime(1)),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = replacements[results.indexOf(true)];
      const keys = await ctx.store.listKeys(project.id);
      expect(keys.map((k) => k.id).sort()).toEqual([secret.id, winner?.id].sort());
      expect(keys.find((k) => k.id === secret.id)?.replacedBy).toBe(winner?.id);
    });

    it('touchKey moves lastUsedAt forward only; an unknown id is no error', async () => {
      const { project, secret } = await seedProject(ctx.store);
      await ctx.store.touchKey(secret.id, testTime(60_000));
      expect((await ctx.store.getKey(project.id, secret.id))?.lastUsedAt).toEqual(testTime(60_000));
      await ctx.store.touchKey(secret.id, testTime(30_000));
      expect((await ctx.store.getKey(project.id, secret.id))?.lastUsedAt).toEqual(testTime(60_000));
      await ctx.store.touchKey(secret.id, testTime(120_000));
      expect((await ctx.store.findSecret(secret.hash))?.secret.lastUsedAt).toEqual(testTime(120_000));
      await ctx.store.touchKey(testId('key'), testTime(1));
    });

    it('concurrent touches leave the latest time', async () => {
      const { project, secret } = await seedProject(ctx.store);
      await Promise.all(
        Array.from({ length: ctx.concurrency }, (_, i) =>
          ctx.store.touchKey(secret.id, testTime(1000 * (i + 1))),
        ),
      );
      expect((await ctx.store.getKey(project.id, secret.id))?.lastUsedAt).toEqual(
        testTime(1000 * ctx.concurrency),
      );
    });
  });
}
