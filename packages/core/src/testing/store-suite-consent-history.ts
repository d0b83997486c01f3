/**
 * Store conformance, ConsentStore role: consent changes and their evidence (topic states, status,
 * group memberships, the history records and events of one `writeConsent`; appended records;
 * concurrent writers).
 */
import { expect, it } from 'vitest';
import { makeGroup, testId, testTime } from './store-fixtures.js';
import { makeConsentRecord, makeTopic } from './store-suite-consent-fixtures.js';
import { makeEvent } from './store-suite-events.js';
import { addresses, type StoreSuiteContext, seedProject } from './store-suite-helpers.js';

/** Registers the tests of consent writes and the consent history. */
export function describeConsentHistory(ctx: StoreSuiteContext): void {
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
}
