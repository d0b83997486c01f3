/** Store conformance, ConsentStore role: topics, and the members a topic's mail reaches (its rule). */
import { expect, it } from 'vitest';
import { topicStateOf } from '../consent/topic-rule.js';
import type { TopicState } from '../store/consent-records.js';
import type { ProfileRecord } from '../store/records.js';
import { makeGroup, testTime } from './store-fixtures.js';
import { makeTopic } from './store-suite-consent-fixtures.js';
import {
  addresses,
  expectStoreError,
  PRESERVE,
  type StoreSuiteContext,
  seedProfiles,
  seedProject,
  sorted,
} from './store-suite-helpers.js';

/** Registers the tests of topics: their records, and `listTopicMembers` against the core's topic rule. */
export function describeTopics(ctx: StoreSuiteContext): void {
  it('creates, reads, lists, updates and deletes topics, scoped by project', async () => {
    const { project } = await seedProject(ctx.store);
    const { project: other } = await seedProject(ctx.store);
    const news = makeTopic(project.id);
    const offers = makeTopic(project.id, { key: 'offers', defaultState: 'opt-out', description: null });
    await ctx.store.createTopic(offers);
    await ctx.store.createTopic(news);
    await expectStoreError(ctx.store.createTopic(makeTopic(project.id)), 'CONFLICT', ['news']);
    await ctx.store.createTopic(makeTopic(other.id));
    expect(await ctx.store.getTopic(project.id, 'news')).toEqual(news);
    expect(await ctx.store.getTopic(project.id, 'nope')).toBeUndefined();
    expect((await ctx.store.listTopics(project.id)).map((t) => t.key)).toEqual(['news', 'offers']);
    const updated = await ctx.store.updateTopic(
      project.id,
      'news',
      { name: 'Product news', visibility: 'private' },
      testTime(5),
    );
    expect(updated).toEqual({ ...news, name: 'Product news', visibility: 'private', updatedAt: testTime(5) });
    expect(await ctx.store.getTopic(project.id, 'news')).toEqual(updated);
    expect(await ctx.store.updateTopic(project.id, 'nope', { name: 'x' }, testTime(5))).toBeUndefined();
    const [a] = addresses(1);
    await ctx.store.writeConsent({
      projectId: project.id,
      address: a as string,
      topics: [{ topicKey: 'news', state: 'subscribed' }],
      records: [],
      now: testTime(6),
    });
    expect(await ctx.store.deleteTopic(project.id, 'news')).toBe(true);
    expect(await ctx.store.deleteTopic(project.id, 'news')).toBe(false);
    expect(await ctx.store.topicStates(project.id, a as string)).toEqual([]);
    expect(await ctx.store.getTopic(other.id, 'news')).toBeDefined();
  });

  it('listTopicMembers lists the members a topic allows, by the rule, in pages by address, per group and project', async () => {
    const { project } = await seedProject(ctx.store);
    const { project: other } = await seedProject(ctx.store);
    const group = makeGroup(project.id, 'g');
    const elsewhere = makeGroup(project.id, 'h');
    await ctx.store.createGroup(group);
    await ctx.store.createGroup(elsewhere);
    const members = addresses(24);
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
      addresses(3, 100).map((address) => ({ address })),
      { ...PRESERVE, groupId: elsewhere.id },
      testTime(),
    );
    await seedProfiles(
      ctx.store,
      other.id,
      members.map((address) => ({ address })),
      PRESERVE,
      testTime(),
    );
    // i % 3: 0 subscribed, 1 unsubscribed, 2 no state (the default); another topic's states never count.
    for (const [i, address] of members.entries()) {
      const topics = [
        ...(i % 3 === 2
          ? []
          : [{ topicKey: 'news', state: i % 3 === 0 ? ('subscribed' as const) : ('unsubscribed' as const) }]),
        { topicKey: 'other', state: 'subscribed' as const },
      ];
      await ctx.store.writeConsent({
        projectId: project.id,
        address: address as string,
        topics,
        records: [],
        now: testTime(1),
      });
    }
    const list = async (defaultState: 'opt-in' | 'opt-out', limit: number) => {
      const seen: string[] = [];
      let after: string | null = null;
      for (;;) {
        const page: ProfileRecord[] = await ctx.store.listTopicMembers(
          project.id,
          group.id,
          { key: 'news', defaultState },
          { after, limit },
        );
        expect(page.length).toBeLessThanOrEqual(limit);
        seen.push(...page.map((p) => p.address));
        if (page.length < limit) return seen;
        after = page.at(-1)?.address ?? null;
      }
    };
    const byRule = (keep: (i: number) => boolean) => sorted(members.filter((_, i) => keep(i)));
    expect(await list('opt-in', 5)).toEqual(byRule((i) => i % 3 === 0));
    expect(await list('opt-out', 5)).toEqual(byRule((i) => i % 3 !== 1));
    expect(await list('opt-out', 100)).toEqual(byRule((i) => i % 3 !== 1));
    const [first] = await ctx.store.listTopicMembers(
      project.id,
      group.id,
      { key: 'news', defaultState: 'opt-in' },
      { limit: 1 },
    );
    expect(first).toEqual(await ctx.store.getProfile(project.id, first?.address ?? ''));
    expect(
      await ctx.store.listTopicMembers(
        other.id,
        group.id,
        { key: 'news', defaultState: 'opt-out' },
        { limit: 100 },
      ),
    ).toEqual([]);
  });

  it('listTopicMembers keeps exactly whom the core topic rule allows, for every state and default', async () => {
    // The rule lives twice: in the core (`topicStateOf`) and in the store's read. Every combination of a
    // contact's explicit state (none included) and the topic's default is checked against the core's
    // answer, so that the two cannot drift (a new TopicState fails here until the store handles it).
    const explicitStates: Array<TopicState | undefined> = [
      undefined,
      'subscribed',
      'unsubscribed',
      'pending',
    ];
    const { project } = await seedProject(ctx.store);
    const group = makeGroup(project.id, 'rule');
    await ctx.store.createGroup(group);
    const members = explicitStates.map((state, i) => ({ address: `rule${i}@example.test`, state }));
    await seedProfiles(
      ctx.store,
      project.id,
      members.map(({ address }) => ({ address })),
      { ...PRESERVE, groupId: group.id },
      testTime(),
    );
    for (const { address, state } of members) {
      if (!state) continue;
      await ctx.store.writeConsent({
        projectId: project.id,
        address,
        topics: [{ topicKey: 'news', state }],
        records: [],
        now: testTime(1),
      });
    }
    for (const defaultState of ['opt-in', 'opt-out'] as const) {
      const listed = await ctx.store.listTopicMembers(
        project.id,
        group.id,
        { key: 'news', defaultState },
        { limit: 100 },
      );
      const expected = members
        .filter((m) => topicStateOf({ defaultState }, m.state) === 'subscribed')
        .map((m) => m.address);
      expect({ defaultState, listed: listed.map((p) => p.address).sort() }).toEqual({
        defaultState,
        listed: expected.sort(),
      });
    }
  });
}
