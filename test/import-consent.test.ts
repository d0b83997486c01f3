import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { type MemoryTransport, memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RangeHost, rangeHost } from './support/range-host.js';

/**
 * CSV import consent columns (issue 38) on SQLite: a list moved in from another service keeps its consent
 * without asking again. Columns mapped to `consent.state`, `consent.topics`, `consent.source` and
 * `consent.time` set each contact's subscription and topic states (a double opt-in topic included: no
 * confirmation), recorded as `import:<label>` at the given time; the next topic broadcast agrees.
 */

const CSV = Buffer.from(
  [
    'Email,Name,Status,Lists,Origin,Opted in',
    'ann@example.test,Ann,subscribed,news;offers,mailchimp signup form,2024-03-01T10:00:00Z',
    'bob@example.test,Bob,unsubscribed,,mailchimp,2024-04-02T11:00:00Z',
    'cay@example.test,Cay,,offers=unsubscribed|news=subscribed|nope,,not a date',
    'dee@example.test,Dee,,,,',
  ].join('\n'),
);

describe('CSV import with consent columns', () => {
  let host: RangeHost;
  let mailroom: Mailroom;
  let secret: string;
  let transport: MemoryTransport;

  beforeAll(async () => {
    host = await rangeHost(CSV);
    const dbPath = join(mkdtempSync(join(tmpdir(), 'mailroom-import-consent-')), 'mailroom.db');
    transport = memoryTransport();
    mailroom = createMailroom({
      store: sqlStore({ url: dbPath }),
      transport,
      fetch: { allowHosts: [host.allow] },
    });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    await mailroom.admin.addSender(created.project.id, { address: 'news@acme.test' });
    await mailroom.topics.create(secret, { key: 'news', name: 'News', doubleOptIn: true });
    await mailroom.topics.create(secret, { key: 'offers', name: 'Offers', default: 'opt-out' });
    await mailroom.audience.createGroup(secret, { ref: 'moved' });
  });

  afterAll(async () => {
    await mailroom.close();
    await host.close();
  });

  it('sets states and subscriptions from the columns, recorded as import:<label> at the given time', async () => {
    const started = await mailroom.audience.startImport(secret, {
      url: host.url,
      group: 'moved',
      label: 'mailchimp',
      columnMappings: {
        Status: 'consent.state',
        Lists: 'consent.topics',
        Origin: 'consent.source',
        'Opted in': 'consent.time',
      },
    });
    const importAt = Date.now();
    await mailroom.worker.drain();
    expect((await mailroom.audience.getImport(secret, started.id)).status).toBe('done');

    const states = async (address: string) =>
      Object.fromEntries(
        (await mailroom.topics.contactTopics(secret, address)).map((t) => [
          t.key,
          `${t.state}${t.explicit ? '' : '*'}`,
        ]),
      );
    expect(await states('ann@example.test')).toEqual({ news: 'subscribed', offers: 'subscribed' });
    expect(await states('cay@example.test')).toEqual({ news: 'subscribed', offers: 'unsubscribed' });
    expect(await states('dee@example.test')).toEqual({ news: 'unsubscribed*', offers: 'subscribed*' });
    expect((await mailroom.audience.getProfile(secret, 'bob@example.test')).status).toBe('unsubscribed');
    // The consent columns are not traits.
    const ann = await mailroom.audience.getProfile(secret, 'ann@example.test');
    expect(Object.keys(ann.traits)).toEqual([]);
    expect(ann.name).toBe('Ann');

    const history = (await mailroom.topics.history(secret, 'ann@example.test')).data;
    expect(history.map((r) => [r.change, r.topic, r.state, r.source, r.at.toISOString(), r.wording])).toEqual(
      [
        [
          'topic',
          'news',
          'subscribed',
          'import:mailchimp',
          '2024-03-01T10:00:00.000Z',
          'source: mailchimp signup form',
        ],
        [
          'topic',
          'offers',
          'subscribed',
          'import:mailchimp',
          '2024-03-01T10:00:00.000Z',
          'source: mailchimp signup form',
        ],
      ],
    );
    const bob = (await mailroom.topics.history(secret, 'bob@example.test')).data;
    expect(bob.map((r) => [r.change, r.state, r.source, r.at.toISOString()])).toEqual([
      ['unsubscribe', 'unsubscribed', 'import:mailchimp', '2024-04-02T11:00:00.000Z'],
    ]);
    // An unreadable time is the import's.
    const cay = (await mailroom.topics.history(secret, 'cay@example.test')).data;
    expect(cay).toHaveLength(2);
    expect(cay[0]?.at.getTime()).toBeGreaterThanOrEqual(importAt - 60_000);
    expect(await mailroom.topics.history(secret, 'dee@example.test')).toEqual({ data: [], next: null });

    // Importing again changes nothing and records nothing more.
    const again = await mailroom.audience.startImport(secret, {
      url: host.url,
      group: 'moved',
      label: 'mailchimp',
      columnMappings: { Status: 'consent.state', Lists: 'consent.topics', 'Opted in': 'consent.time' },
    });
    await mailroom.worker.drain();
    expect((await mailroom.audience.getImport(secret, again.id)).status).toBe('done');
    expect((await mailroom.topics.history(secret, 'ann@example.test')).data).toHaveLength(2);

    // The next broadcast to the double opt-in topic reaches the imported subscribers, without confirming.
    await mailroom.broadcast(secret, {
      subject: 'News',
      sender: 'news@acme.test',
      message: 'Hi',
      sources: [{ ref: 'moved' }],
      options: { topic: 'news' },
    });
    await mailroom.worker.drain();
    const to = transport.outbox.map((m) => m.to.address).sort();
    // ann and cay said yes to news; bob unsubscribed from everything; dee is at news' opt-in default.
    expect(to).toEqual(['ann@example.test', 'cay@example.test']);
  });
});
