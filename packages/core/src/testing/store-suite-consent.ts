/** Store conformance: the ConsentStore role (topics, topic states, the consent history). */
import { expect, it } from 'vitest';
import { topicStateOf } from '../consent/topic-rule.js';
import type { ConsentRecord, TopicRecord, TopicState } from '../store/consent-records.js';
import type { ProfileRecord } from '../store/records.js';
import { makeGroup, testId, testTime } from './store-fixtures.js';
import { makeEvent } from './store-suite-events.js';
import {
  addresses,
  expectStoreError,
  PRESERVE,
  type StoreSuiteContext,
  seedProfiles,
  seedProject,
  sorted,
} from './store-suite-helpers.js';

/** A test topic. */
export function makeTopic(projectId: string, overrides: Partial<TopicRecord> = {}): TopicRecord {
  return {
    projectId,
    key: 'news',
    name: 'News <b>ç</b>',
    description: 'What we ship',
    defaultState: 'opt-in',
    visibility: 'public',
    doubleOptIn: false,
    createdAt: testTime(),
    updatedAt: testTime(),
    ...overrides,
  };
}

/** A test consent record. */
export function makeConsentRecord(
  projectId: string,
  address: string,
  overrides: Partial<ConsentRecord> = {},
): ConsentRecord {
  return {
    id: testId('cns'),
    projectId,
    address,
    at: testTime(),
    change: 'topic',
    topicKey: 'news',
    state: 'subscribed',
    source: 'api',
    ip: '192.0.2.1',
    userAgent: 'Agent ç',
    mailingRef: null,
    ...overrides,
  };
}

/** Registers the tests of topics and consent. */
export function describeConsent(ctx: StoreSuiteContext): void {
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

  it('sets group memberships with the change and its event: added once, removed, other groups untouched', async () => {
    const { project } = await seedProject(ctx.store);
    const [a, b] = addresses(2) as [string, string];
    const vip = makeGroup(project.id, 'vip');
    const trial = makeGroup(project.id, 'trial');
    await ctx.store.createGroup(vip);
    await ctx.store.createGroup(trial);
    const members = async (groupId: string) =>
      (await ctx.store.listGroupMembers(project.id, groupId, { after: null, limit: 10 })).map(
        (p) => p.address,
      );
    const event = makeEvent(project.id, { type: 'contact.groups_changed', address: a });
    await ctx.store.writeConsent(
      {
        projectId: project.id,
        address: a,
        records: [],
        groups: [
          { groupId: vip.id, member: true },
          { groupId: trial.id, member: true },
        ],
        now: testTime(1),
      },
      { events: [event], messages: [] },
    );
    // Adding a member again changes nothing; b joins too.
    for (const address of [a, b]) {
      await ctx.store.writeConsent({
        projectId: project.id,
        address,
        records: [],
        groups: [{ groupId: vip.id, member: true }],
        now: testTime(2),
      });
    }
    expect(await members(vip.id)).toEqual([a, b].sort());
    expect(await members(trial.id)).toEqual([a]);
    expect(await ctx.store.getProfile(project.id, b)).toMatchObject({ address: b, status: 'subscribed' });
    expect((await ctx.store.listEvents(project.id, {}, { limit: 10 })).map((e) => e.id)).toEqual([event.id]);
    await ctx.store.writeConsent({
      projectId: project.id,
      address: a,
      records: [],
      groups: [
        { groupId: trial.id, member: false },
        { groupId: trial.id, member: false },
      ],
      now: testTime(3),
    });
    expect(await members(trial.id)).toEqual([]);
    expect(await members(vip.id)).toEqual([a, b].sort());
  });

  it('writes topic states, status, records and events in one change; creates a bare profile', async () => {
    const { project } = await seedProject(ctx.store);
    const [a, b] = addresses(2) as [string, string];
    await ctx.store.createTopic(makeTopic(project.id));
    await ctx.store.createTopic(makeTopic(project.id, { key: 'offers' }));
    const first = makeConsentRecord(project.id, a);
    const event = makeEvent(project.id, { type: 'contact.topics_changed', address: a });
    await ctx.store.writeConsent(
      {
        projectId: project.id,
        address: a,
        topics: [
          { topicKey: 'news', state: 'subscribed' },
          { topicKey: 'offers', state: 'unsubscribed' },
        ],
        records: [first],
        now: testTime(1),
      },
      { events: [event], messages: [] },
    );
    const profile = await ctx.store.getProfile(project.id, a);
    expect(profile).toMatchObject({ address: a, name: null, status: 'subscribed', labels: [] });
    expect(await ctx.store.topicStates(project.id, a)).toEqual([
      { projectId: project.id, address: a, topicKey: 'news', state: 'subscribed', updatedAt: testTime(1) },
      {
        projectId: project.id,
        address: a,
        topicKey: 'offers',
        state: 'unsubscribed',
        updatedAt: testTime(1),
      },
    ]);
    expect((await ctx.store.listEvents(project.id, {}, { limit: 10 })).map((e) => e.id)).toEqual([event.id]);
    // Clearing one state, unsubscribing from everything.
    const second = makeConsentRecord(project.id, a, {
      id: testId('cns'),
      change: 'unsubscribe',
      topicKey: null,
      state: null,
      at: testTime(2),
      ip: null,
      userAgent: null,
      mailingRef: 'bc_1',
    });
    await ctx.store.writeConsent({
      projectId: project.id,
      address: a,
      topics: [{ topicKey: 'offers', state: null }],
      status: 'unsubscribed',
      records: [second],
      now: testTime(2),
    });
    expect((await ctx.store.getProfile(project.id, a))?.status).toBe('unsubscribed');
    expect((await ctx.store.topicStates(project.id, a)).map((s) => s.topicKey)).toEqual(['news']);
    expect(await ctx.store.listConsentRecords(project.id, a, { limit: 10 })).toEqual([first, second]);
    expect(await ctx.store.listConsentRecords(project.id, a, { after: first.id, limit: 10 })).toEqual([
      second,
    ]);
    expect(await ctx.store.listConsentRecords(project.id, a, { limit: 1 })).toEqual([first]);
    expect(await ctx.store.listConsentRecords(project.id, b, { limit: 10 })).toEqual([]);
    // findTopicStates: only explicit rows of that topic, only the asked addresses.
    await ctx.store.writeConsent({
      projectId: project.id,
      address: b,
      topics: [{ topicKey: 'news', state: 'unsubscribed' }],
      records: [],
      now: testTime(3),
    });
    const found = await ctx.store.findTopicStates(project.id, 'news', [a, b, 'none@example.com']);
    expect(found.map((s) => [s.address, s.state]).sort()).toEqual([
      [a, 'subscribed'],
      [b, 'unsubscribed'],
    ]);
    expect(await ctx.store.findTopicStates(project.id, 'offers', [a, b])).toEqual([]);
    expect(await ctx.store.findTopicStates('prj_other', 'news', [a, b])).toEqual([]);
    expect(await ctx.store.findTopicStates(project.id, 'news', [])).toEqual([]);
  });

  it('concurrent consent writes to one address: every record is kept, the states are one writer’s', async () => {
    const { project } = await seedProject(ctx.store);
    await ctx.store.createTopic(makeTopic(project.id));
    const [a] = addresses(1) as [string];
    const writes = Array.from({ length: ctx.concurrency }, (_, i) =>
      ctx.store.writeConsent({
        projectId: project.id,
        address: a,
        topics: [{ topicKey: 'news', state: i % 2 === 0 ? 'subscribed' : 'unsubscribed' }],
        records: [makeConsentRecord(project.id, a, { at: testTime(i) })],
        now: testTime(i),
      }),
    );
    await Promise.all(writes);
    expect(await ctx.store.listConsentRecords(project.id, a, { limit: 100 })).toHaveLength(ctx.concurrency);
    expect(await ctx.store.topicStates(project.id, a)).toHaveLength(1);
  });

  it('erases an address’s consent: states gone, history kept under the hash without IP or agent', async () => {
    const { project } = await seedProject(ctx.store);
    await ctx.store.createTopic(makeTopic(project.id));
    const [a, b] = addresses(2) as [string, string];
    const kept = makeConsentRecord(project.id, b);
    const gone = makeConsentRecord(project.id, a);
    for (const [address, record] of [
      [a, gone],
      [b, kept],
    ] as const) {
      await ctx.store.writeConsent({
        projectId: project.id,
        address,
        topics: [{ topicKey: 'news', state: 'subscribed' }],
        records: [record],
        now: testTime(1),
      });
    }
    const erasure = makeConsentRecord(project.id, 'sha256:abc', {
      change: 'erasure',
      topicKey: null,
      state: null,
      source: 'api',
      ip: null,
      userAgent: null,
      at: testTime(9),
    });
    await ctx.store.eraseConsent(project.id, a, 'sha256:abc', erasure);
    expect(await ctx.store.topicStates(project.id, a)).toEqual([]);
    expect(await ctx.store.listConsentRecords(project.id, a, { limit: 10 })).toEqual([]);
    expect(await ctx.store.listConsentRecords(project.id, 'sha256:abc', { limit: 10 })).toEqual([
      { ...gone, address: 'sha256:abc', ip: null, userAgent: null },
      erasure,
    ]);
    expect(await ctx.store.listConsentRecords(project.id, b, { limit: 10 })).toEqual([kept]);
    expect(await ctx.store.topicStates(project.id, b)).toHaveLength(1);
  });

  it('keeps an erased address as its hash once, finds it by hash, per project, and forgets it', async () => {
    const { project } = await seedProject(ctx.store);
    const { project: other } = await seedProject(ctx.store);
    const [a] = addresses(1) as [string];
    const erasure = (at: number) =>
      makeConsentRecord(project.id, 'sha256:aa', {
        change: 'erasure',
        topicKey: null,
        state: null,
        ip: null,
        userAgent: null,
        at: testTime(at),
      });
    expect(await ctx.store.findErasedAddresses(project.id, ['sha256:aa'])).toEqual([]);
    await ctx.store.eraseConsent(project.id, a, 'sha256:aa', erasure(1));
    // A second erasure (the address came back and went again) keeps one row.
    await ctx.store.eraseConsent(project.id, a, 'sha256:aa', erasure(2));
    expect(await ctx.store.findErasedAddresses(project.id, ['sha256:bb', 'sha256:aa', 'sha256:aa'])).toEqual([
      'sha256:aa',
    ]);
    expect(await ctx.store.findErasedAddresses(other.id, ['sha256:aa'])).toEqual([]);
    expect(await ctx.store.findErasedAddresses(project.id, [])).toEqual([]);
    expect(await ctx.store.forgetErasedAddress(project.id, 'sha256:aa')).toBe(true);
    expect(await ctx.store.forgetErasedAddress(project.id, 'sha256:aa')).toBe(false);
    expect(await ctx.store.findErasedAddresses(project.id, ['sha256:aa'])).toEqual([]);
  });

  it('appends records that change no state, in order, and makes no profile', async () => {
    const { project } = await seedProject(ctx.store);
    const [a] = addresses(1) as [string];
    const first = makeConsentRecord(project.id, a, {
      change: 'sent-unsubscribed',
      topicKey: null,
      state: null,
      source: 'broadcast',
      ip: null,
      userAgent: null,
      mailingRef: 'bc_1',
      at: testTime(1),
    });
    const second = { ...first, id: testId('cns'), at: testTime(2), mailingRef: 'bc_2' };
    await ctx.store.appendConsentRecords([first, second]);
    await ctx.store.appendConsentRecords([]);
    expect(await ctx.store.listConsentRecords(project.id, a, { limit: 10 })).toEqual([first, second]);
    expect(await ctx.store.getProfile(project.id, a)).toBeUndefined();
    expect(await ctx.store.topicStates(project.id, a)).toEqual([]);
  });

  it("puts and replaces a project's brand, per project", async () => {
    const { project } = await seedProject(ctx.store);
    const { project: other } = await seedProject(ctx.store);
    expect(await ctx.store.getProjectBrand(project.id)).toBeUndefined();
    const logo = `data:image/png;base64,${'A'.repeat(4000)}`;
    const brand = { projectId: project.id, color: '#0a7f5a', logo, updatedAt: testTime(1) };
    await ctx.store.putProjectBrand(brand);
    expect(await ctx.store.getProjectBrand(project.id)).toEqual(brand);
    const cleared = { ...brand, color: null, logo: null, updatedAt: testTime(2) };
    await ctx.store.putProjectBrand(cleared);
    expect(await ctx.store.getProjectBrand(project.id)).toEqual(cleared);
    expect(await ctx.store.getProjectBrand(other.id)).toBeUndefined();
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
