import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom, type Store, type TopicStateChange } from '@mailroom/core';
import { seedProfiles } from '@mailroom/core/testing';
import { memoryStore } from '@mailroom/memory';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../packages/sql/test/support/databases.js';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

/**
 * Sending to a topic (issue 38), end to end over real SMTP to a loopback sink, on every store: a broadcast
 * to a topic over contacts in mixed states (opt-in default, opt-out default, pending a double opt-in,
 * unsubscribed from the topic, unsubscribed from everything, suppressed) reaches exactly the set the rules give, checked against the
 * store, including contacts who leave the topic after the source was expanded and while it is sent.
 */

const SENDER = 'news@acme.test';
const pg = testDatabases('postgres');
const my = testDatabases('mysql');

interface Case {
  name: string;
  make: () => Promise<Store>;
  /** Contacts in the group. */
  contacts: number;
}

const CASES: Case[] = [
  {
    name: 'sqlite',
    make: async () => sqlStore({ url: join(mkdtempSync(join(tmpdir(), 'mailroom-topics-')), 'mailroom.db') }),
    // Twice the others: 8 pages of the group (500 members a page) and 5 of the members subscribed to news,
    // each page with every contact class. 10,000 (20 pages) took the same paths, in about twice the time.
    contacts: 4_000,
  },
  { name: 'memory', make: async () => memoryStore(), contacts: 2_000 },
  ...(pg
    ? [{ name: 'postgres', make: async () => sqlStore({ url: await pg.create() }), contacts: 2_000 }]
    : []),
  ...(my
    ? [{ name: 'mariadb', make: async () => sqlStore({ url: await my.create() }), contacts: 2_000 }]
    : []),
];

/** The contact classes, by `i % 9`. */
const KIND = {
  /** No choice: `news` (opt-in) no, `offers` (opt-out) yes. */
  none: 0,
  newsYes: 1,
  newsNo: 2,
  /** Said yes to `news`, then unsubscribed from everything. */
  everythingNo: 3,
  /** Said yes to `news`, suppressed. */
  suppressed: 4,
  offersNo: 5,
  newsYesOffersNo: 6,
  /** Said yes to `news`; leaves it after the broadcast's source was expanded, before the send. */
  leavesNews: 7,
  /** Signed up to both topics with double opt-in, not confirmed yet: `pending`, receives neither. */
  pending: 8,
} as const;

const address = (i: number) => `c${String(i).padStart(6, '0')}@example.test`;

describe.each(CASES)('a topic broadcast over SMTP on $name', ({ make, contacts }) => {
  let sink: SmtpSink;
  let store: Store;
  let mailroom: Mailroom;
  let secret: string;
  let projectId: string;
  const all = Array.from({ length: contacts }, (_, i) => address(i));
  const kindOf = (a: string) => Number(a.slice(1, 7)) % 9;

  beforeAll(async () => {
    sink = await startSmtpSink();
    store = await make();
    mailroom = createMailroom({
      store,
      transport: smtpTransport({ host: sink.host, port: sink.port, maxConnections: 8 }),
      unsubscribe: { baseUrl: 'http://127.0.0.1:9/api' },
      worker: { concurrency: 16, batchSize: 200 },
    });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    projectId = created.project.id;
    await mailroom.admin.addSender(projectId, { address: SENDER });
    const group = await mailroom.admin.createAudienceGroup(projectId, { ref: 'all' });
    await mailroom.topics.create(secret, { key: 'news', name: 'News', default: 'opt-in' });
    await mailroom.topics.create(secret, { key: 'offers', name: 'Offers', default: 'opt-out' });
    const now = new Date();
    const seed = { onExistingProfile: 'preserve', onExistingTrait: 'preserve', groupId: group.id } as const;
    for (let i = 0; i < contacts; i += 1000) {
      await seedProfiles(
        store,
        projectId,
        all.slice(i, i + 1000).map((a) => ({ address: a })),
        seed,
        now,
      );
    }
    // The states, written as the engine writes them (one consent change each).
    const writes = all.map((a) => async () => {
      const kind = kindOf(a);
      const topics: TopicStateChange[] = [];
      if ([1, 3, 4, 6, 7].includes(kind)) topics.push({ topicKey: 'news', state: 'subscribed' });
      if (kind === KIND.newsNo) topics.push({ topicKey: 'news', state: 'unsubscribed' });
      if (kind === KIND.offersNo || kind === KIND.newsYesOffersNo)
        topics.push({ topicKey: 'offers', state: 'unsubscribed' });
      if (kind === KIND.pending) {
        topics.push({ topicKey: 'news', state: 'pending' }, { topicKey: 'offers', state: 'pending' });
      }
      if (topics.length > 0 || kind === KIND.everythingNo) {
        await store.writeConsent({
          projectId,
          address: a,
          topics,
          ...(kind === KIND.everythingNo ? { status: 'unsubscribed' as const } : {}),
          records: [],
          now,
        });
      }
      if (kind === KIND.suppressed) {
        await store.addSuppression({ projectId, address: a, reason: 'manual', detail: null, createdAt: now });
      }
    });
    for (let i = 0; i < writes.length; i += 100) {
      await Promise.all(writes.slice(i, i + 100).map((w) => w()));
    }
  }, 300_000);

  afterAll(async () => {
    await mailroom?.close();
    await sink?.close();
  });

  afterEach(() => {
    sink.messages.length = 0;
  });

  /** Who a topic's mail may reach now, read from the store: the rule, address by address. */
  async function allowedNow(topic: string): Promise<Set<string>> {
    const record = await store.getTopic(projectId, topic);
    if (!record) throw new Error(`no topic ${topic}`);
    const allowed = new Set<string>();
    for (let i = 0; i < all.length; i += 500) {
      const slice = all.slice(i, i + 500);
      const [profiles, suppressed, states] = await Promise.all([
        store.findProfiles(projectId, slice),
        store.findSuppressed(projectId, slice),
        store.findTopicStates(projectId, topic, slice),
      ]);
      const out = new Set(suppressed.map((s) => s.address));
      for (const p of profiles) if (p.status !== 'subscribed') out.add(p.address);
      const explicit = new Map(states.map((s) => [s.address, s.state]));
      for (const a of slice) {
        const state = explicit.get(a) ?? (record.defaultState === 'opt-out' ? 'subscribed' : 'unsubscribed');
        if (state === 'subscribed' && !out.has(a)) allowed.add(a);
      }
    }
    return allowed;
  }

  /** The addresses the sink received, for the subject given. */
  function received(subject: string): string[] {
    return sink.messages
      .filter((m) => m.parsed.subject === subject)
      .flatMap((m) => m.envelope.rcptTo)
      .sort();
  }

  /** A mailing's deliveries of one status, by address. */
  async function deliveries(ref: string, status: 'sent' | 'skipped' | 'suppressed') {
    const mailing = await store.getMailing(projectId, ref);
    if (!mailing) throw new Error(`no mailing ${ref}`);
    const out: Array<{ address: string; lastError: string | null }> = [];
    let after: string | null = null;
    for (;;) {
      const page = await store.listDeliveries(mailing.id, { after, limit: 1000, status });
      out.push(...page.map((d) => ({ address: d.address, lastError: d.lastError })));
      if (page.length < 1000) return out;
      after = page.at(-1)?.address ?? null;
    }
  }

  it('reaches exactly whom the topic allows, skipping and counting who left it after the expansion', async () => {
    const later = new Date(Date.now() + 3_600_000);
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'News',
      sender: SENDER,
      message: '<p>News</p>',
      sources: [{ ref: 'all' }],
      options: { topic: 'news', scheduleFor: later.toISOString() },
    });
    // The source is expanded now (deliveries wait for the schedule): the topic filter leaves out who said no.
    await mailroom.worker.drain();
    const expanded = await store.countDeliveries((await store.getMailing(projectId, ref))?.id ?? '');
    const queued = expanded.queued ?? 0;
    expect(queued).toBe(all.filter((a) => [1, 6, 7].includes(kindOf(a))).length);
    // Class 7 leaves `news` through the API before any delivery is claimed.
    const leaving = all.filter((a) => kindOf(a) === KIND.leavesNews);
    for (let i = 0; i < leaving.length; i += 100) {
      await Promise.all(
        leaving
          .slice(i, i + 100)
          .map((a) =>
            mailroom.topics.setContactTopics(
              secret,
              a,
              { news: 'unsubscribed' },
              { ip: '192.0.2.7', userAgent: 'test' },
            ),
          ),
      );
    }
    await mailroom.reschedule(secret, ref, new Date());
    await mailroom.worker.drain();

    const expected = [...(await allowedNow('news'))].sort();
    expect(expected.length).toBe(all.filter((a) => [1, 6].includes(kindOf(a))).length);
    expect(received('News')).toEqual(expected);
    expect((await deliveries(ref, 'sent')).map((d) => d.address)).toEqual(expected);
    const skipped = await deliveries(ref, 'skipped');
    expect(skipped.map((d) => d.address)).toEqual(leaving);
    expect(new Set(skipped.map((d) => d.lastError))).toEqual(new Set(['unsubscribed from topic news']));
    // Each leave is in the contact's consent history, with its source, address and agent.
    const history = await mailroom.topics.history(secret, leaving[0] as string);
    expect(history.data.at(-1)).toMatchObject({
      change: 'topic',
      topic: 'news',
      state: 'unsubscribed',
      source: 'api',
      ip: '192.0.2.7',
      userAgent: 'test',
    });
  }, 300_000);

  it('a source topic filter with an opt-out default: everyone but who said no, the unsubscribed and the suppressed', async () => {
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'Offers',
      sender: SENDER,
      message: '<p>Offers</p>',
      sources: [{ ref: 'all', topic: 'offers' }],
    });
    await mailroom.worker.drain();
    const expected = [...(await allowedNow('offers'))].sort();
    expect(expected.length).toBe(all.filter((a) => ![3, 4, 5, 6, 8].includes(kindOf(a))).length);
    expect(received('Offers')).toEqual(expected);
    expect((await deliveries(ref, 'sent')).map((d) => d.address)).toEqual(expected);
  }, 300_000);

  it('contacts who leave the topic while the broadcast is sent: each is either sent before or skipped', async () => {
    const stayers = all.filter((a) => kindOf(a) === KIND.newsYes);
    // Half of them leave while the worker sends.
    const leavers = stayers.filter((_, i) => i % 2 === 0);
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'Flash',
      sender: SENDER,
      message: '<p>Flash</p>',
      sources: [{ ref: 'all' }],
      options: { topic: 'news' },
    });
    mailroom.worker.start();
    try {
      for (let i = 0; i < leavers.length; i += 50) {
        await Promise.all(
          leavers
            .slice(i, i + 50)
            .map((a) => mailroom.topics.setContactTopics(secret, a, { news: 'unsubscribed' })),
        );
      }
    } finally {
      await mailroom.worker.stop();
    }
    await mailroom.worker.drain();
    const sent = (await deliveries(ref, 'sent')).map((d) => d.address);
    const skipped = await deliveries(ref, 'skipped');
    expect(received('Flash')).toEqual(sent);
    // Nobody is skipped who did not leave, and every leaver is either sent (before the leave) or skipped.
    const leaving = new Set(leavers);
    for (const d of skipped) {
      expect(leaving.has(d.address)).toBe(true);
      expect(d.lastError).toBe('unsubscribed from topic news');
    }
    // A leaver is sent (claimed before the leave), skipped (left after the expansion, before the claim) or
    // has no delivery (left before the expansion reached it); everyone else the topic allows is sent.
    const sentSet = new Set(sent);
    const others = all.filter((x) => [1, 6].includes(kindOf(x)) && !leaving.has(x));
    for (const a of others) expect(sentSet.has(a)).toBe(true);
    expect(sent.filter((a) => !leaving.has(a)).sort()).toEqual(others);
    expect(skipped.length + sent.filter((a) => leaving.has(a)).length).toBeLessThanOrEqual(leavers.length);
  }, 300_000);
});
