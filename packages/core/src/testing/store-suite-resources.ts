/** Store conformance: the ResourceStore role (pages and removals of senders, templates, suppressions). */
import { describe, expect, it } from 'vitest';
import { makeSender, makeSuppression, makeTemplate, testTime } from './store-fixtures.js';
import { type StoreSuiteContext, seedProject } from './store-suite-helpers.js';

/** Registers the tests of the management API's listings, template versions and removals. */
export function describeResources(ctx: StoreSuiteContext): void {
  describe('senders', () => {
    it('listSenders pages by address in byte order, scoped to the project', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      // Upper case sorts before lower case by bytes, whatever the database's locale.
      for (const address of ['b@example.com', 'B@example.com', 'a@example.com', 'c@example.com']) {
        await ctx.store.addSender(makeSender(project.id, address));
      }
      await ctx.store.addSender(makeSender(other.id, 'a0@example.com'));
      const first = await ctx.store.listSenders(project.id, { limit: 2 });
      expect(first.map((s) => s.address)).toEqual(['B@example.com', 'a@example.com']);
      const second = await ctx.store.listSenders(project.id, { after: 'a@example.com', limit: 2 });
      expect(second.map((s) => s.address)).toEqual(['b@example.com', 'c@example.com']);
      expect(await ctx.store.listSenders(project.id, { after: 'c@example.com', limit: 2 })).toEqual([]);
      const sender = makeSender(project.id, 'd@example.com', { name: 'Dee', createdAt: testTime(7) });
      await ctx.store.addSender(sender);
      expect(await ctx.store.listSenders(project.id, { after: 'c@example.com', limit: 5 })).toEqual([sender]);
    });

    it('removeSender removes only that address of that project, once', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      await ctx.store.addSender(makeSender(project.id, 'news@example.com'));
      await ctx.store.addSender(makeSender(other.id, 'news@example.com'));
      expect(await ctx.store.removeSender(project.id, 'NEWS@example.com')).toBe(false);
      expect(await ctx.store.removeSender(project.id, 'news@example.com')).toBe(true);
      expect(await ctx.store.removeSender(project.id, 'news@example.com')).toBe(false);
      expect(await ctx.store.findSender(project.id, 'news@example.com')).toBeUndefined();
      expect(await ctx.store.findSender(other.id, 'news@example.com')).toBeDefined();
      // The address may be added again.
      await ctx.store.addSender(makeSender(project.id, 'news@example.com'));
      expect(await ctx.store.findSender(project.id, 'news@example.com')).toBeDefined();
    });
  });

  describe('templates', () => {
    it('listTemplatePage pages by ref, scoped to the project', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      for (const ref of ['welcome', 'Receipt', 'digest'])
        await ctx.store.putTemplate(makeTemplate(project.id, ref));
      await ctx.store.putTemplate(makeTemplate(other.id, 'alpha'));
      const first = await ctx.store.listTemplatePage(project.id, { limit: 2 });
      expect(first.map((t) => t.ref)).toEqual(['Receipt', 'digest']);
      const rest = await ctx.store.listTemplatePage(project.id, { after: 'digest', limit: 2 });
      expect(rest).toEqual([await ctx.store.getTemplate(project.id, 'welcome')]);
    });

    it('writeTemplateVersion creates only a missing ref, and updates only the version read', async () => {
      const { project } = await seedProject(ctx.store);
      const v1 = makeTemplate(project.id, 'welcome', { createdAt: testTime(1), updatedAt: testTime(1) });
      expect(await ctx.store.writeTemplateVersion(v1, null)).toBe(true);
      expect(await ctx.store.getTemplate(project.id, 'welcome')).toEqual(v1);
      // A second creation of the ref writes nothing.
      const again = makeTemplate(project.id, 'welcome', { source: 'other', compiled: 'other' });
      expect(await ctx.store.writeTemplateVersion(again, null)).toBe(false);
      expect(await ctx.store.getTemplate(project.id, 'welcome')).toEqual(v1);

      const v2 = {
        ...v1,
        format: 'text' as const,
        subject: null,
        source: 'Hi {{ name }}',
        compiled: 'Hi {{ name }}',
        version: 2,
        updatedAt: testTime(2),
      };
      expect(await ctx.store.writeTemplateVersion(v2, 1)).toBe(true);
      expect(await ctx.store.getTemplate(project.id, 'welcome')).toEqual(v2);
      // A stale version writes nothing.
      expect(await ctx.store.writeTemplateVersion({ ...v2, version: 2, source: 'stale' }, 1)).toBe(false);
      expect(await ctx.store.writeTemplateVersion({ ...v2, ref: 'missing' }, 1)).toBe(false);
      expect(await ctx.store.getTemplate(project.id, 'welcome')).toEqual(v2);
      expect(await ctx.store.getTemplate(project.id, 'missing')).toBeUndefined();
    });

    it('racing writes of one version: exactly one wins', async () => {
      const { project } = await seedProject(ctx.store);
      const base = makeTemplate(project.id, 'race');
      const creations = await Promise.all(
        Array.from({ length: ctx.concurrency }, (_, i) =>
          ctx.store.writeTemplateVersion(
            { ...base, id: `${base.id}_${i}`, source: `c${i}`, compiled: `c${i}` },
            null,
          ),
        ),
      );
      expect(creations.filter(Boolean)).toHaveLength(1);
      const updates = await Promise.all(
        Array.from({ length: ctx.concurrency }, (_, i) =>
          ctx.store.writeTemplateVersion({ ...base, version: 2, source: `u${i}`, compiled: `u${i}` }, 1),
        ),
      );
      expect(updates.filter(Boolean)).toHaveLength(1);
      const winner = updates.indexOf(true);
      expect(await ctx.store.getTemplate(project.id, 'race')).toMatchObject({
        version: 2,
        source: `u${winner}`,
      });
    });

    it('removeTemplate removes only that ref of that project, once', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      await ctx.store.putTemplate(makeTemplate(project.id, 'welcome'));
      await ctx.store.putTemplate(makeTemplate(other.id, 'welcome'));
      expect(await ctx.store.removeTemplate(project.id, 'Welcome')).toBe(false);
      expect(await ctx.store.removeTemplate(project.id, 'welcome')).toBe(true);
      expect(await ctx.store.removeTemplate(project.id, 'welcome')).toBe(false);
      expect(await ctx.store.getTemplate(project.id, 'welcome')).toBeUndefined();
      expect(await ctx.store.getTemplate(other.id, 'welcome')).toBeDefined();
      expect(await ctx.store.writeTemplateVersion(makeTemplate(project.id, 'welcome'), null)).toBe(true);
    });
  });

  describe('suppressions', () => {
    it('listSuppressions pages by address with reason and date, scoped to the project', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      const rows = [
        makeSuppression(project.id, 'b@example.com', {
          reason: 'hard-bounce',
          detail: '550 5.1.1',
          createdAt: testTime(5),
        }),
        makeSuppression(project.id, 'a@example.com', { reason: 'complaint', createdAt: testTime(6) }),
        makeSuppression(project.id, 'Z@example.com'),
      ];
      for (const row of rows) await ctx.store.addSuppression(row);
      await ctx.store.addSuppression(makeSuppression(other.id, 'a0@example.com'));
      // `Z@` is stored folded (`foldAddress`), so it sorts as `z@`.
      const z = { ...(rows[2] as (typeof rows)[number]), address: 'z@example.com' };
      expect(await ctx.store.listSuppressions(project.id, { limit: 2 })).toEqual([rows[1], rows[0]]);
      expect(await ctx.store.listSuppressions(project.id, { after: 'a@example.com', limit: 2 })).toEqual([
        rows[0],
        z,
      ]);
    });

    it('listSuppressions with `contains` keeps the addresses containing it, by bytes, and pages within them', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      const addresses = ['ann@shop.test', 'ünn@shop.test', 'bob@shop.test', 'ann@mail.test', 'x%_@shop.test'];
      for (const address of addresses) await ctx.store.addSuppression(makeSuppression(project.id, address));
      await ctx.store.addSuppression(makeSuppression(other.id, 'ann@shop.test'));
      const list = async (contains: string, after?: string, limit = 10): Promise<string[]> =>
        (await ctx.store.listSuppressions(project.id, { contains, limit, ...(after ? { after } : {}) })).map(
          (s) => s.address,
        );
      expect(await list('ann')).toEqual(['ann@mail.test', 'ann@shop.test']);
      // By bytes: `ü` (0xC3 in UTF-8) after every ASCII letter.
      expect(await list('@shop.test')).toEqual([
        'ann@shop.test',
        'bob@shop.test',
        'x%_@shop.test',
        'ünn@shop.test',
      ]);
      expect(await list('@shop.test', 'ann@shop.test', 1)).toEqual(['bob@shop.test']);
      // Wildcards of LIKE are plain characters here.
      expect(await list('%')).toEqual(['x%_@shop.test']);
      expect(await list('_')).toEqual(['x%_@shop.test']);
      expect(await list('nobody')).toEqual([]);
      expect(await list('')).toHaveLength(addresses.length);
    });
  });
}
