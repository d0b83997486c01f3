/** Store conformance: the AudienceStore role (audience groups, profiles and suppressions). */
import { describe, expect, it } from 'vitest';
import type { ProfileRecord, ProfileUpsertOptions, Variables } from '../store/records.js';
import { makeGroup, makeSuppression, richVariables, testTime } from './store-fixtures.js';
import {
  addresses,
  expectStoreError,
  PRESERVE,
  type StoreSuiteContext,
  seedProfiles,
  seedProject,
  sorted,
} from './store-suite-helpers.js';

const OVERRIDE: ProfileUpsertOptions = { onExistingTrait: 'override', onExistingProfile: 'override' };

/** Registers the tests of groups, profiles and suppressions. */
export function describeAudience(ctx: StoreSuiteContext): void {
  describe('audience groups', () => {
    it('createGroup then getGroup round-trips; (project, ref) is unique: CONFLICT naming the ref', async () => {
      const { project } = await seedProject(ctx.store);
      const group = makeGroup(project.id, 'vip', { name: 'VIP ⭐', createdAt: testTime(321) });
      await ctx.store.createGroup(group);
      expect(await ctx.store.getGroup(project.id, 'vip')).toEqual(group);
      expect(await ctx.store.getGroup(project.id, 'other')).toBeUndefined();
      await expectStoreError(ctx.store.createGroup(makeGroup(project.id, 'vip')), 'CONFLICT', [
        'audience group vip already exists',
        project.id,
      ]);
    });

    it('groups are scoped by project; listGroups is by ref with member counts', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      const b = makeGroup(project.id, 'b');
      const a = makeGroup(project.id, 'a');
      const foreign = makeGroup(other.id, 'a');
      for (const g of [b, a, foreign]) await ctx.store.createGroup(g);
      await seedProfiles(
        ctx.store,
        project.id,
        addresses(3).map((address) => ({ address })),
        { ...PRESERVE, groupId: b.id },
        testTime(),
      );
      expect(await ctx.store.listGroups(project.id)).toEqual([
        { ...a, members: 0 },
        { ...b, members: 3 },
      ]);
      expect(await ctx.store.listGroups(other.id)).toEqual([{ ...foreign, members: 0 }]);
      expect(await ctx.store.getGroup(other.id, 'b')).toBeUndefined();
    });
  });

  describe('profiles', () => {
    it('an absent profile is inserted with the defaults', async () => {
      const { project } = await seedProject(ctx.store);
      const now = testTime(42);
      await seedProfiles(
        ctx.store,
        project.id,
        [
          { address: 'bare@example.com' },
          { address: 'full@example.com', name: 'Zoë', traits: richVariables(), labels: ['csv-1'] },
        ],
        PRESERVE,
        now,
      );
      const base = { projectId: project.id, status: 'subscribed', createdAt: now, updatedAt: now };
      expect(await ctx.store.getProfile(project.id, 'bare@example.com')).toEqual({
        ...base,
        address: 'bare@example.com',
        name: null,
        traits: {},
        labels: [],
      });
      expect(await ctx.store.getProfile(project.id, 'full@example.com')).toEqual({
        ...base,
        address: 'full@example.com',
        name: 'Zoë',
        traits: richVariables(),
        labels: ['csv-1'],
      });
    });

    it('preserve keeps a stored name and stored traits, adding new trait keys', async () => {
      const { project } = await seedProject(ctx.store);
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'a@example.com', name: 'Old', traits: { plan: 'free', nested: { x: 1 } } }],
        PRESERVE,
        testTime(),
      );
      await seedProfiles(
        ctx.store,
        project.id,
        [
          {
            address: 'a@example.com',
            name: 'New',
            traits: { plan: 'pro', nested: { y: 2 }, city: 'Zürich' },
          },
        ],
        PRESERVE,
        testTime(1_000),
      );
      const profile = await ctx.store.getProfile(project.id, 'a@example.com');
      expect(profile?.name).toBe('Old');
      expect(profile?.traits).toEqual({ plan: 'free', nested: { x: 1 }, city: 'Zürich' });
      expect(profile?.createdAt).toEqual(testTime());
    });

    it('override replaces the name and, key by key, the traits', async () => {
      const { project } = await seedProject(ctx.store);
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'a@example.com', name: 'Old', traits: { plan: 'free', keep: 1, nested: { x: 1 } } }],
        PRESERVE,
        testTime(),
      );
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'a@example.com', name: 'New', traits: { plan: 'pro', nested: { y: 2 } } }],
        OVERRIDE,
        testTime(1_000),
      );
      const profile = await ctx.store.getProfile(project.id, 'a@example.com');
      expect(profile?.name).toBe('New');
      expect(profile?.traits).toEqual({ plan: 'pro', keep: 1, nested: { y: 2 } });
    });

    it('name and traits follow their own action independently', async () => {
      const { project } = await seedProject(ctx.store);
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'a@example.com', name: 'Old', traits: { plan: 'free' } }],
        PRESERVE,
        testTime(),
      );
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'a@example.com', name: 'New', traits: { plan: 'pro' } }],
        { onExistingTrait: 'override', onExistingProfile: 'preserve' },
        testTime(1),
      );
      let profile = await ctx.store.getProfile(project.id, 'a@example.com');
      expect([profile?.name, profile?.traits]).toEqual(['Old', { plan: 'pro' }]);
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'a@example.com', name: 'Newer', traits: { plan: 'team' } }],
        { onExistingTrait: 'preserve', onExistingProfile: 'override' },
        testTime(2),
      );
      profile = await ctx.store.getProfile(project.id, 'a@example.com');
      expect([profile?.name, profile?.traits]).toEqual(['Newer', { plan: 'pro' }]);
    });

    it('a stored null name is replaced even under preserve; an absent name never erases one', async () => {
      const { project } = await seedProject(ctx.store);
      await seedProfiles(ctx.store, project.id, [{ address: 'a@example.com' }], PRESERVE, testTime());
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'a@example.com', name: 'Ann' }],
        PRESERVE,
        testTime(1),
      );
      expect((await ctx.store.getProfile(project.id, 'a@example.com'))?.name).toBe('Ann');
      await seedProfiles(ctx.store, project.id, [{ address: 'a@example.com' }], OVERRIDE, testTime(2));
      expect((await ctx.store.getProfile(project.id, 'a@example.com'))?.name).toBe('Ann');
    });

    it('labels are a union in insertion order; status is never changed by an upsert', async () => {
      const { project } = await seedProject(ctx.store);
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'a@example.com', labels: ['x', 'y'] }],
        PRESERVE,
        testTime(),
      );
      await ctx.store.setProfileStatus(project.id, 'a@example.com', 'unsubscribed', testTime(1));
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'a@example.com', labels: ['y', 'z', 'ä'] }],
        OVERRIDE,
        testTime(2),
      );
      const profile = await ctx.store.getProfile(project.id, 'a@example.com');
      expect(profile?.labels).toEqual(['x', 'y', 'z', 'ä']);
      expect(profile?.status).toBe('unsubscribed');
    });

    it('a trait is present when the profile has it as its own key: `constructor` and `__proto__` too', async () => {
      const { project } = await seedProject(ctx.store);
      // Keys that every object inherits, or that an assignment would not create: traits like any other.
      const odd = JSON.parse('{"constructor": "c1", "toString": "t1", "__proto__": "p1"}') as Variables;
      await seedProfiles(ctx.store, project.id, [{ address: 'a@example.com', traits: { plan: 'free' } }]);
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'a@example.com', traits: odd }],
        PRESERVE,
        testTime(1),
      );
      const stored = await ctx.store.getProfile(project.id, 'a@example.com');
      expect(Object.entries(stored?.traits ?? {}).sort()).toEqual(
        Object.entries({ ...odd, plan: 'free' }).sort(),
      );
      expect(stored?.updatedAt).toEqual(testTime(1));
      const other = JSON.parse('{"constructor": "c2", "toString": "t2", "__proto__": "p2"}') as Variables;
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'a@example.com', traits: other }],
        PRESERVE,
        testTime(2),
      );
      const kept = await ctx.store.getProfile(project.id, 'a@example.com');
      expect(Object.entries(kept?.traits ?? {}).sort()).toEqual(
        Object.entries({ ...odd, plan: 'free' }).sort(),
      );
      expect(kept?.updatedAt).toEqual(testTime(1));
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'a@example.com', traits: other }],
        OVERRIDE,
        testTime(3),
      );
      const replaced = await ctx.store.getProfile(project.id, 'a@example.com');
      expect(Object.entries(replaced?.traits ?? {}).sort()).toEqual(
        Object.entries({ ...other, plan: 'free' }).sort(),
      );
      // A new profile takes them as given, too.
      await seedProfiles(ctx.store, project.id, [{ address: 'b@example.com', traits: odd }]);
      const fresh = await ctx.store.getProfile(project.id, 'b@example.com');
      expect(Object.entries(fresh?.traits ?? {}).sort()).toEqual(Object.entries(odd).sort());
    });

    it('updatedAt moves only when an upsert changed the profile', async () => {
      const { project } = await seedProject(ctx.store);
      const row = { address: 'a@example.com', name: 'Ann', traits: { plan: 'free', n: 1 }, labels: ['x'] };
      const updatedAt = async () => (await ctx.store.getProfile(project.id, row.address))?.updatedAt;
      await seedProfiles(ctx.store, project.id, [row], PRESERVE, testTime());
      // The same data again, under either action, and traits equal to the stored ones: no change.
      await seedProfiles(ctx.store, project.id, [row], PRESERVE, testTime(1));
      await seedProfiles(
        ctx.store,
        project.id,
        [{ ...row, traits: { n: 1, plan: 'free' } }],
        OVERRIDE,
        testTime(2),
      );
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: row.address, name: null, labels: [] }],
        OVERRIDE,
        testTime(3),
      );
      // A differing name or trait that the action keeps, and a label already there: no change either.
      await seedProfiles(
        ctx.store,
        project.id,
        [{ ...row, name: 'Other', traits: { plan: 'pro' } }],
        PRESERVE,
        testTime(4),
      );
      expect(await updatedAt()).toEqual(testTime());
      expect(await ctx.store.getProfile(project.id, row.address)).toMatchObject({
        name: 'Ann',
        traits: { plan: 'free', n: 1 },
        labels: ['x'],
        createdAt: testTime(),
      });
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: row.address, labels: ['x', 'y'] }],
        PRESERVE,
        testTime(5),
      );
      expect(await updatedAt()).toEqual(testTime(5));
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: row.address, traits: { n: 2 } }],
        OVERRIDE,
        testTime(6),
      );
      expect(await updatedAt()).toEqual(testTime(6));
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: row.address, name: 'Anna' }],
        OVERRIDE,
        testTime(7),
      );
      expect(await updatedAt()).toEqual(testTime(7));
      expect(await ctx.store.getProfile(project.id, row.address)).toMatchObject({
        name: 'Anna',
        traits: { plan: 'free', n: 2 },
        labels: ['x', 'y'],
      });
    });

    it('labels are kept once, in the order of their first occurrence', async () => {
      const { project } = await seedProject(ctx.store);
      await seedProfiles(ctx.store, project.id, [{ address: 'a@example.com', labels: ['x', 'y', 'x', 'y'] }]);
      expect((await ctx.store.getProfile(project.id, 'a@example.com'))?.labels).toEqual(['x', 'y']);
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'a@example.com', labels: ['z', 'y', 'z', 'w', 'x'] }],
        PRESERVE,
        testTime(1),
      );
      expect((await ctx.store.getProfile(project.id, 'a@example.com'))?.labels).toEqual(['x', 'y', 'z', 'w']);
      // Two rows for one address in one write apply in order.
      await seedProfiles(
        ctx.store,
        project.id,
        [
          { address: 'a@example.com', labels: ['v', 'w'] },
          { address: 'b@example.com', labels: ['q', 'q'] },
          { address: 'a@example.com', labels: ['u', 'v'] },
        ],
        PRESERVE,
        testTime(2),
      );
      expect((await ctx.store.getProfile(project.id, 'a@example.com'))?.labels).toEqual([
        'x',
        'y',
        'z',
        'w',
        'v',
        'u',
      ]);
      expect((await ctx.store.getProfile(project.id, 'b@example.com'))?.labels).toEqual(['q']);
    });

    it('findProfiles returns the existing profiles of the addresses, in bulk', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      const many = addresses(1_500);
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: many[7] ?? '', name: 'Seven', traits: richVariables() }, { address: many[1_400] ?? '' }],
        PRESERVE,
        testTime(3),
      );
      await seedProfiles(ctx.store, other.id, [{ address: many[8] ?? '' }], PRESERVE, testTime());
      const found = await ctx.store.findProfiles(project.id, many);
      const expected = [
        await ctx.store.getProfile(project.id, many[7] ?? ''),
        await ctx.store.getProfile(project.id, many[1_400] ?? ''),
      ];
      expect([...found].sort((a, b) => (a.address < b.address ? -1 : 1))).toEqual(expected);
      expect(found[0]?.createdAt).toEqual(testTime(3));
      expect(await ctx.store.findProfiles(project.id, [])).toEqual([]);
    });

    it('profiles are scoped by project', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'a@example.com', name: 'Mine' }],
        PRESERVE,
        testTime(),
      );
      await seedProfiles(
        ctx.store,
        other.id,
        [{ address: 'a@example.com', name: 'Theirs' }],
        OVERRIDE,
        testTime(),
      );
      expect((await ctx.store.getProfile(project.id, 'a@example.com'))?.name).toBe('Mine');
      expect((await ctx.store.getProfile(other.id, 'a@example.com'))?.name).toBe('Theirs');
      expect(await ctx.store.getProfile(project.id, 'b@example.com')).toBeUndefined();
    });

    it('addresses are compared exactly: the local part keeps its case', async () => {
      const { project } = await seedProject(ctx.store);
      await seedProfiles(
        ctx.store,
        project.id,
        [
          { address: 'Ann@example.com', name: 'Upper' },
          { address: 'ann@example.com', name: 'Lower' },
        ],
        PRESERVE,
        testTime(),
      );
      expect((await ctx.store.getProfile(project.id, 'Ann@example.com'))?.name).toBe('Upper');
      expect((await ctx.store.getProfile(project.id, 'ann@example.com'))?.name).toBe('Lower');
      expect(await ctx.store.getProfile(project.id, 'ANN@example.com')).toBeUndefined();
    });

    it('groupId makes every row a member, once, and upserts many rows in one call', async () => {
      const { project } = await seedProject(ctx.store);
      const group = makeGroup(project.id, 'all');
      await ctx.store.createGroup(group);
      const many = addresses(1_200);
      const options = { ...PRESERVE, groupId: group.id };
      await seedProfiles(
        ctx.store,
        project.id,
        many.map((address, i) => ({ address, name: `N${i}`, traits: { i }, labels: ['bulk'] })),
        options,
        testTime(),
      );
      await seedProfiles(
        ctx.store,
        project.id,
        many.slice(0, 10).map((address) => ({ address })),
        options,
        testTime(1),
      );
      expect(await ctx.store.listGroups(project.id)).toEqual([{ ...group, members: 1_200 }]);
      expect((await ctx.store.getProfile(project.id, many[1_199] ?? ''))?.traits).toEqual({ i: 1_199 });
    });

    it('setProfileStatus creates a bare profile or changes only the status', async () => {
      const { project } = await seedProject(ctx.store);
      await ctx.store.setProfileStatus(project.id, 'new@example.com', 'unsubscribed', testTime(7));
      expect(await ctx.store.getProfile(project.id, 'new@example.com')).toEqual({
        projectId: project.id,
        address: 'new@example.com',
        name: null,
        traits: {},
        status: 'unsubscribed',
        labels: [],
        createdAt: testTime(7),
        updatedAt: testTime(7),
      });
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'old@example.com', name: 'Old', traits: { a: 1 }, labels: ['l'] }],
        PRESERVE,
        testTime(),
      );
      await ctx.store.setProfileStatus(project.id, 'old@example.com', 'unsubscribed', testTime(9));
      await ctx.store.setProfileStatus(project.id, 'new@example.com', 'subscribed', testTime(9));
      const old = await ctx.store.getProfile(project.id, 'old@example.com');
      expect(old).toMatchObject({ name: 'Old', traits: { a: 1 }, labels: ['l'], status: 'unsubscribed' });
      expect(old?.createdAt).toEqual(testTime());
      expect((await ctx.store.getProfile(project.id, 'new@example.com'))?.status).toBe('subscribed');
    });

    it('listGroupMembers pages by address, only over the group, scoped by project', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      const group = makeGroup(project.id, 'g');
      const otherGroup = makeGroup(project.id, 'h');
      await ctx.store.createGroup(group);
      await ctx.store.createGroup(otherGroup);
      const members = addresses(25).reverse();
      await seedProfiles(
        ctx.store,
        project.id,
        members.map((address) => ({ address })),
        { ...PRESERVE, groupId: group.id },
        testTime(),
      );
      await seedProfiles(
        ctx.store,
        project.id,
        addresses(5, 100).map((address) => ({ address })),
        { ...PRESERVE, groupId: otherGroup.id },
        testTime(),
      );
      // The same addresses in another project, which must not leak into the listing.
      await seedProfiles(
        ctx.store,
        other.id,
        members.map((address) => ({ address })),
        PRESERVE,
        testTime(),
      );
      const seen: ProfileRecord[] = [];
      let after: string | null = null;
      for (;;) {
        const page: ProfileRecord[] = await ctx.store.listGroupMembers(project.id, group.id, {
          after,
          limit: 10,
        });
        expect(page.length).toBeLessThanOrEqual(10);
        if (page.length === 0) break;
        seen.push(...page);
        after = page[page.length - 1]?.address ?? null;
      }
      expect(seen.map((p) => p.address)).toEqual(sorted(members));
      expect(seen[0]).toMatchObject({ projectId: project.id, status: 'subscribed', traits: {}, labels: [] });
      expect(await ctx.store.listGroupMembers(other.id, group.id, { limit: 100 })).toEqual([]);
    });
  });

  describe('suppressions', () => {
    it('addSuppression, findSuppressed and removeSuppression', async () => {
      const { project } = await seedProject(ctx.store);
      const bounce = makeSuppression(project.id, 'b@example.com', {
        reason: 'hard-bounce',
        detail: '550 5.1.1 User unknown — ünknown',
        createdAt: testTime(5),
      });
      const manual = makeSuppression(project.id, 'm@example.com');
      await ctx.store.addSuppression(bounce);
      await ctx.store.addSuppression(manual);
      const found = await ctx.store.findSuppressed(project.id, [
        'b@example.com',
        'x@example.com',
        'm@example.com',
      ]);
      expect([...found].sort((a, b) => (a.address < b.address ? -1 : 1))).toEqual([bounce, manual]);
      expect(await ctx.store.findSuppressed(project.id, [])).toEqual([]);
      expect(await ctx.store.removeSuppression(project.id, 'b@example.com')).toBe(true);
      expect(await ctx.store.removeSuppression(project.id, 'b@example.com')).toBe(false);
      expect(await ctx.store.findSuppressed(project.id, ['b@example.com', 'm@example.com'])).toEqual([
        manual,
      ]);
    });

    it('suppressions are stored and matched folded: any ASCII case of the local part is the same address', async () => {
      const { project } = await seedProject(ctx.store);
      await ctx.store.addSuppression(makeSuppression(project.id, 'suppA@example.com', { reason: 'manual' }));
      const folded = makeSuppression(project.id, 'suppa@example.com', { reason: 'manual' });
      expect(await ctx.store.findSuppressed(project.id, ['suppA@example.com'])).toEqual([folded]);
      expect(await ctx.store.findSuppressed(project.id, ['SUPPA@example.com', 'suppa@example.com'])).toEqual([
        folded,
      ]);
      // Another case is the same suppression: replaced, not added.
      await ctx.store.addSuppression(
        makeSuppression(project.id, 'SuPpA@example.com', { reason: 'complaint' }),
      );
      const found = await ctx.store.findSuppressed(project.id, ['suppa@example.com']);
      expect(found.map((r) => [r.address, r.reason])).toEqual([['suppa@example.com', 'complaint']]);
      // Only ASCII letters fold: `Ä` and `ä` stay two addresses.
      await ctx.store.addSuppression(makeSuppression(project.id, 'Äda@example.com'));
      expect(await ctx.store.findSuppressed(project.id, ['äda@example.com'])).toEqual([]);
      expect(await ctx.store.findSuppressed(project.id, ['Äda@example.com'])).toHaveLength(1);
      // Lifted by any case.
      expect(await ctx.store.removeSuppression(project.id, 'SUPPA@example.com')).toBe(true);
      expect(await ctx.store.findSuppressed(project.id, ['suppA@example.com'])).toEqual([]);
    });

    it('findUnsubscribed matches unsubscribed profiles folded, as suppressions; findProfiles stays exact', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      await seedProfiles(
        ctx.store,
        project.id,
        [{ address: 'Foo@example.com' }, { address: 'bar@example.com' }, { address: 'Äda@example.com' }],
        PRESERVE,
        testTime(),
      );
      await ctx.store.setProfileStatus(project.id, 'Foo@example.com', 'unsubscribed', testTime(1));
      await ctx.store.setProfileStatus(project.id, 'Äda@example.com', 'unsubscribed', testTime(1));
      await ctx.store.setProfileStatus(other.id, 'BAR@example.com', 'unsubscribed', testTime(1));
      const sorted = (list: string[]) => [...list].sort();
      // Any ASCII case of an unsubscribed profile's address, each folded form once.
      expect(
        sorted(
          await ctx.store.findUnsubscribed(project.id, [
            'foo@example.com',
            'FOO@example.com',
            'Foo@example.com',
            'bar@example.com',
          ]),
        ),
      ).toEqual(['foo@example.com']);
      // A subscribed profile, another project's, and a non-ASCII case: no match.
      expect(await ctx.store.findUnsubscribed(project.id, ['BAR@example.com', 'äda@example.com'])).toEqual(
        [],
      );
      expect(await ctx.store.findUnsubscribed(project.id, ['Äda@example.com'])).toEqual(['Äda@example.com']);
      expect(await ctx.store.findUnsubscribed(project.id, [])).toEqual([]);
      // Resubscribed: no longer matched. The profile itself is found by its own address only.
      await ctx.store.setProfileStatus(project.id, 'Foo@example.com', 'subscribed', testTime(2));
      expect(await ctx.store.findUnsubscribed(project.id, ['foo@example.com'])).toEqual([]);
      expect((await ctx.store.findProfiles(project.id, ['Foo@example.com'])).map((p) => p.address)).toEqual([
        'Foo@example.com',
      ]);
      expect(await ctx.store.findProfiles(project.id, ['foo@example.com'])).toEqual([]);
    });

    it('addSuppression replaces the suppression of the same address', async () => {
      const { project } = await seedProject(ctx.store);
      await ctx.store.addSuppression(makeSuppression(project.id, 'a@example.com'));
      const complaint = makeSuppression(project.id, 'a@example.com', {
        reason: 'complaint',
        detail: 'fbl',
        createdAt: testTime(10),
      });
      await ctx.store.addSuppression(complaint);
      expect(await ctx.store.findSuppressed(project.id, ['a@example.com'])).toEqual([complaint]);
    });

    it('suppressions are scoped by project and looked up in bulk', async () => {
      const { project } = await seedProject(ctx.store);
      const { project: other } = await seedProject(ctx.store);
      await ctx.store.addSuppression(makeSuppression(other.id, 'a@example.com'));
      expect(await ctx.store.findSuppressed(project.id, ['a@example.com'])).toEqual([]);
      expect(await ctx.store.removeSuppression(project.id, 'a@example.com')).toBe(false);
      const many = addresses(1_500);
      await ctx.store.addSuppression(makeSuppression(project.id, many[1_234] ?? ''));
      const found = await ctx.store.findSuppressed(project.id, many);
      expect(found.map((s) => s.address)).toEqual([many[1_234]]);
    });
  });
}
