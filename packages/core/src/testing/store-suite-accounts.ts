/** Store conformance: the AccountStore role (projects, secrets, sender identities, templates, settings). */
import { describe, expect, it } from 'vitest';
import { makeProject, makeSecret, makeSender, makeTemplate, testTime } from './store-fixtures.js';
import { expectStoreError, type StoreSuiteContext, seedProject } from './store-suite-helpers.js';

/** Registers the tests of projects, secrets, senders, templates and ensureSetting. */
export function describeAccounts(ctx: StoreSuiteContext): void {
  describe('ping', () => {
    // Optional: a store without ping is read by the engine from its other calls' outcomes.
    it('a reachable store with room answers ping (when it has one) and stays usable', async () => {
      expect(await ctx.store.ping?.()).toBeUndefined();
      const { project } = await seedProject(ctx.store);
      expect(await ctx.store.ping?.()).toBeUndefined();
      expect((await ctx.store.getProject(project.id))?.id).toBe(project.id);
    });
  });

  describe('projects and secrets', () => {
    it('createProject then getProject and findSecret round-trip exactly', async () => {
      const project = makeProject({ name: 'Ünïcode 项目 🚀', createdAt: testTime(123) });
      const secret = makeSecret(project.id, { mode: 'sandbox', createdAt: testTime(456) });
      await ctx.store.createProject(project, secret);
      expect(await ctx.store.getProject(project.id)).toEqual(project);
      expect(await ctx.store.findSecret(secret.hash)).toEqual({ project, secret });
    });

    it('unknown ids and hashes give undefined', async () => {
      await seedProject(ctx.store);
      expect(await ctx.store.getProject('prj_missing')).toBeUndefined();
      expect(await ctx.store.findSecret('0'.repeat(64))).toBeUndefined();
    });

    it('addProjectSecret adds a second secret to the project', async () => {
      const { project, secret } = await seedProject(ctx.store);
      const second = makeSecret(project.id, { mode: 'sandbox', createdAt: testTime(1) });
      await ctx.store.addProjectSecret(second);
      expect(await ctx.store.findSecret(secret.hash)).toEqual({ project, secret });
      expect(await ctx.store.findSecret(second.hash)).toEqual({ project, secret: second });
    });

    it('a secret hash is unique across projects: CONFLICT, and createProject writes nothing', async () => {
      const { secret } = await seedProject(ctx.store);
      const other = makeProject();
      await expectStoreError(ctx.store.createProject(other, { ...secret, projectId: other.id }), 'CONFLICT');
      expect(await ctx.store.getProject(other.id)).toBeUndefined();
      const { project: third } = await seedProject(ctx.store);
      await expectStoreError(ctx.store.addProjectSecret({ ...secret, projectId: third.id }), 'CONFLICT');
      expect((await ctx.store.findSecret(secret.hash))?.secret).toEqual(secret);
    });

    it('a duplicate project id is a CONFLICT', async () => {
      const { project } = await seedProject(ctx.store);
      await expectStoreError(ctx.store.createProject({ ...project }, makeSecret(project.id)), 'CONFLICT');
    });

    it('listProjects returns every project, oldest first', async () => {
      const late = makeProject({ createdAt: testTime(2_000) });
      const early = makeProject({ createdAt: testTime(1_000) });
      const middle = makeProject({ createdAt: testTime(1_500) });
      for (const p of [late, early, middle]) await ctx.store.createProject(p, makeSecret(p.id));
      expect(await ctx.store.listProjects()).toEqual([early, middle, late]);
    });
  });

  describe('sender identities', () => {
    it('addSender then findSender round-trips exactly, DKIM included', async () => {
      const { project } = await seedProject(ctx.store);
      const sender = makeSender(project.id, 'news@example.com', {
        name: 'Nëws 📰',
        dkim: {
          selector: 'mail2030',
          privateKey: '-----BEGIN PRIVATE KEY-----\nMC4CAQA=\n-----END PRIVATE KEY-----\n',
        },
        createdAt: testTime(789),
      });
      const bare = makeSender(project.id, 'bare@example.com');
      await ctx.store.addSender(sender);
      await ctx.store.addSender(bare);
      expect(await ctx.store.findSender(project.id, 'news@example.com')).toEqual(sender);
      expect(await ctx.store.findSender(project.id, 'bare@example.com')).toEqual(bare);
      expect(await ctx.store.findSender(project.id, 'other@example.com')).toBeUndefined();
    });

    it('(project, address) is unique: CONFLICT naming the address; the same address in another project is fine', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      await ctx.store.addSender(makeSender(project.id, 'a@example.com'));
      await expectStoreError(ctx.store.addSender(makeSender(project.id, 'a@example.com')), 'CONFLICT', [
        'sender a@example.com already exists',
        project.id,
      ]);
      const foreign = makeSender(other.id, 'a@example.com');
      await ctx.store.addSender(foreign);
      expect(await ctx.store.findSender(other.id, 'a@example.com')).toEqual(foreign);
    });

    it('lookups are scoped by project', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      const a = makeSender(project.id, 'a@example.com');
      const foreign = makeSender(other.id, 'z@example.com');
      for (const s of [a, foreign]) await ctx.store.addSender(s);
      expect(await ctx.store.findSender(project.id, 'a@example.com')).toEqual(a);
      expect(await ctx.store.findSender(other.id, 'z@example.com')).toEqual(foreign);
      expect(await ctx.store.findSender(project.id, 'z@example.com')).toBeUndefined();
      expect(await ctx.store.findSender(other.id, 'a@example.com')).toBeUndefined();
    });
  });

  describe('templates', () => {
    it('putTemplate then getTemplate round-trips exactly', async () => {
      const { project } = await seedProject(ctx.store);
      const template = makeTemplate(project.id, 'welcome', {
        format: 'mjml',
        subject: 'Willkommen, {{ name }} 🎉',
        source: '<mjml><mj-body><mj-text>Hi {{ name }} — ✓</mj-text></mj-body></mjml>',
        compiled: '<!doctype html><p>Hi {{ name }} — ✓</p>',
        createdAt: testTime(1),
        updatedAt: testTime(2),
      });
      await ctx.store.putTemplate(template);
      expect(await ctx.store.getTemplate(project.id, 'welcome')).toEqual(template);
      expect(await ctx.store.getTemplate(project.id, 'missing')).toBeUndefined();
    });

    it('putTemplate replaces the template with the same (project, ref)', async () => {
      const { project } = await seedProject(ctx.store);
      const first = makeTemplate(project.id, 'welcome');
      await ctx.store.putTemplate(first);
      const second = {
        ...first,
        format: 'text' as const,
        subject: null,
        source: 'v2 {{ name }}',
        compiled: 'v2 {{ name }}',
        version: 2,
        updatedAt: testTime(5_000),
      };
      await ctx.store.putTemplate(second);
      expect(await ctx.store.getTemplate(project.id, 'welcome')).toEqual(second);
      expect(await ctx.store.listTemplates(project.id)).toEqual([second]);
    });

    it('templates are scoped by project and listed by ref', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      const b = makeTemplate(project.id, 'b-ref');
      const a = makeTemplate(project.id, 'a-ref');
      const foreign = makeTemplate(other.id, 'a-ref', { source: 'foreign', compiled: 'foreign' });
      for (const t of [b, foreign, a]) await ctx.store.putTemplate(t);
      expect(await ctx.store.listTemplates(project.id)).toEqual([a, b]);
      expect(await ctx.store.getTemplate(other.id, 'a-ref')).toEqual(foreign);
      expect(await ctx.store.getTemplate(other.id, 'b-ref')).toBeUndefined();
    });
  });

  describe('ensureSetting', () => {
    it('stores the first value and returns it ever after', async () => {
      expect(await ctx.store.ensureSetting('unsubscribe-secret', 'first', testTime())).toBe('first');
      expect(await ctx.store.ensureSetting('unsubscribe-secret', 'second', testTime(1))).toBe('first');
      expect(await ctx.store.ensureSetting('other', 'x'.repeat(2_000), testTime())).toBe('x'.repeat(2_000));
    });

    it('of concurrent calls with one name, every one returns the same value', async () => {
      const values = await Promise.all(
        Array.from({ length: ctx.concurrency }, (_, i) =>
          ctx.store.ensureSetting('race', `v${i}`, testTime(i)),
        ),
      );
      expect(new Set(values).size).toBe(1);
      expect(await ctx.store.ensureSetting('race', 'late', testTime())).toBe(values[0]);
    });
  });
}
