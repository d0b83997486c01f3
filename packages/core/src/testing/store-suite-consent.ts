/** Store conformance: the ConsentStore role (topics, topic states, the consent history). */
import { expect, it } from 'vitest';
import type { ConsentRecord, TopicRecord } from '../store/consent-records.js';
import { testId, testTime } from './store-fixtures.js';
import { makeEvent } from './store-suite-events.js';
import { addresses, expectStoreError, type StoreSuiteContext, seedProject } from './store-suite-helpers.js';

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
}
