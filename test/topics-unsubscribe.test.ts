import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { mailroomRouter } from '@mailroom/http/express';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import express from 'express';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SinkMessage, type SmtpSink, startSmtpSink, toReceivedMessage } from './support/smtp-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * Unsubscribe by topic (issue 38) over HTTP (Express) and SMTP: the RFC 8058 one-click POST of a topic
 * broadcast leaves that topic only, the page offers "unsubscribe from everything", topic names are escaped
 * on the page, every change is a consent record and an event, and `includeUnsubscribed` needs a `full` key.
 */

const PREFIX = '/api';
const SENDER = 'news@acme.test';
const HOSTILE = `News <script>alert("x")</script> & <img src=x onerror=alert(1)>`;

describe('unsubscribe by topic through HTTP and SMTP', () => {
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  let mailroom: Mailroom;
  let server: Server;
  let port = 0;
  let secret: string;
  let projectId: string;

  const base = () => `http://127.0.0.1:${port}${PREFIX}`;

  async function api(method: string, path: string, body?: unknown, key = secret): Promise<Response> {
    return fetch(`${base()}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'user-agent': 'topics-test/1',
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  async function broadcast(subject: string, recipients: string[], extra: Record<string, unknown> = {}) {
    const res = await api('POST', '/send/mail/broadcast', {
      subject,
      sender: SENDER,
      message: '<p>Hello</p>',
      recipients: recipients.map((address) => ({ address })),
      ...extra,
    });
    expect(res.status).toBe(200);
    await mailroom.worker.drain();
  }

  function unsubscribeUrl(subject: string, to: string): string {
    const message = sink.messages.find(
      (m: SinkMessage) => m.parsed.subject === subject && m.envelope.rcptTo.includes(to),
    );
    if (!message) throw new Error(`no ${subject} to ${to}`);
    const value = toReceivedMessage(message.parsed).headers['list-unsubscribe'] ?? '';
    const m = /^<(https?:\/\/[^>\s]+)>$/.exec(value);
    if (!m?.[1]) throw new Error(`not a one-click List-Unsubscribe: ${value}`);
    return m[1];
  }

  const received = (subject: string) =>
    sink.messages
      .filter((m) => m.parsed.subject === subject)
      .flatMap((m) => m.envelope.rcptTo)
      .sort();

  const oneClick = (url: string) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'MailClient/2' },
      body: 'List-Unsubscribe=One-Click',
      redirect: 'manual',
    });

  beforeEach(async () => {
    sink = await startSmtpSink();
    receiver = await startWebhookReceiver();
    const dbPath = join(mkdtempSync(join(tmpdir(), 'mailroom-topics-unsub-')), 'mailroom.db');
    mailroom = createMailroom({
      store: sqlStore({ url: dbPath }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      unsubscribe: { baseUrl: base },
      fetch: { allowHosts: [receiver.host] },
    });
    const app = express();
    app.use(PREFIX, mailroomRouter(mailroom));
    server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(0, '127.0.0.1', (error?: Error) => (error ? reject(error) : resolve(s)));
    });
    port = (server.address() as AddressInfo).port;
    const created = await mailroom.admin.createProject({ name: 'Acme & <Co>' });
    secret = created.secret;
    projectId = created.project.id;
    await mailroom.admin.addSender(projectId, { address: SENDER });
    for (const [key, name] of [
      ['news', HOSTILE],
      ['offers', 'Offers'],
    ] as const) {
      const res = await api('POST', '/topics', { key, name, default: 'opt-out' });
      expect(res.status).toBe(200);
    }
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await mailroom.close();
    await sink.close();
    await receiver.close();
  });

  it('one-click POST leaves the topic only; the page escapes the topic name and offers everything', async () => {
    const hook = await mailroom.webhooks.add(secret, {
      url: receiver.url,
      events: ['contact.topics_changed', 'contact.unsubscribed'],
    });
    receiver.secret = hook.secret;
    await broadcast('News 1', ['ann@example.test', 'bob@example.test'], { options: { topic: 'news' } });
    expect(received('News 1')).toEqual(['ann@example.test', 'bob@example.test']);
    const annUrl = unsubscribeUrl('News 1', 'ann@example.test');
    const bobUrl = unsubscribeUrl('News 1', 'bob@example.test');

    // The page: the hostile name escaped, never raw; a second form for everything.
    const page = await (await fetch(annUrl)).text();
    expect(page).not.toContain('<script>');
    expect(page).not.toContain('<img');
    expect(page).toContain(
      'News &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;',
    );
    expect(page).toContain('Acme &amp; &lt;Co&gt;');
    expect(page).toMatch(/<form method="post" action="[^"?]+\?everything=1">/);
    expect(page).toContain('Unsubscribe from everything');

    // Ann: the mail client's one-click POST, twice (a retry): the topic only, one record, one event.
    for (let i = 0; i < 2; i++) {
      const res = await oneClick(annUrl);
      expect(res.status).toBe(200);
      expect(await res.text()).not.toContain('<script>');
    }
    const ann = (await (await api('GET', '/audience/profiles/ann%40example.test')).json()) as {
      data: { profile: { status: string; topics: Array<{ key: string; state: string; explicit: boolean }> } };
    };
    expect(ann.data.profile.status).toBe('subscribed');
    expect(ann.data.profile.topics).toEqual([
      { key: 'news', name: HOSTILE, visibility: 'public', state: 'unsubscribed', explicit: true },
      { key: 'offers', name: 'Offers', visibility: 'public', state: 'subscribed', explicit: false },
    ]);
    const consent = (await (await api('GET', '/audience/profiles/ann%40example.test/consent')).json()) as {
      data: { consent: Array<Record<string, unknown>>; nextCursor: string | null };
    };
    expect(consent.data.consent).toHaveLength(1);
    expect(consent.data.consent[0]).toMatchObject({
      change: 'topic',
      topic: 'news',
      state: 'unsubscribed',
      source: 'one-click',
      ip: expect.stringMatching(/127\.0\.0\.1/),
      userAgent: 'MailClient/2',
    });
    const events = await mailroom.listEvents(secret, { types: ['contact.topics_changed'], limit: 10 });
    expect(events.items).toHaveLength(1);
    expect(events.items[0]?.data).toMatchObject({
      address: 'ann@example.test',
      topics: [{ key: 'news', state: 'unsubscribed' }],
      source: 'one-click',
    });

    // Bob: the page's second button leaves everything.
    const res = await fetch(`${bobUrl}?everything=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('no more broadcasts');
    expect((await mailroom.store.getProfile(projectId, 'bob@example.test'))?.status).toBe('unsubscribed');
    expect((await mailroom.topics.history(secret, 'bob@example.test')).data).toMatchObject([
      { change: 'unsubscribe', source: 'unsubscribe-page', mailingRef: expect.stringMatching(/^bc_/) },
    ]);
    const unsubscribed = await mailroom.listEvents(secret, { types: ['contact.unsubscribed'], limit: 10 });
    expect(unsubscribed.items.map((e) => e.data.address)).toEqual(['bob@example.test']);
    // Both through the webhooks, signed.
    await mailroom.webhooks.drain();
    expect(
      receiver.received.map((r) => [
        r.payload.type,
        (r.payload.data as { address?: string }).address,
        r.verified,
      ]),
    ).toEqual([
      ['contact.topics_changed', 'ann@example.test', true],
      ['contact.unsubscribed', 'bob@example.test', true],
    ]);

    // The next broadcasts: Ann still gets offers, not news; Bob gets nothing.
    await broadcast('News 2', ['ann@example.test', 'bob@example.test', 'cat@example.test'], {
      options: { topic: 'news' },
    });
    await broadcast('Offers 1', ['ann@example.test', 'bob@example.test', 'cat@example.test'], {
      options: { topic: 'offers' },
    });
    expect(received('News 2')).toEqual(['cat@example.test']);
    expect(received('Offers 1')).toEqual(['ann@example.test', 'cat@example.test']);
    // A transactional message ignores topics unless it names one.
    const plain = await api('POST', '/send/mail', {
      subject: 'Receipt',
      sender: SENDER,
      message: 'Thanks',
      recipients: 'ann@example.test',
    });
    expect(plain.status).toBe(200);
    const held = await api('POST', '/send/mail', {
      subject: 'Digest',
      sender: SENDER,
      message: 'News digest',
      recipients: 'ann@example.test',
      options: { topic: 'news' },
    });
    expect(held.status).toBe(200);
    await mailroom.worker.drain();
    expect(received('Receipt')).toEqual(['ann@example.test']);
    expect(received('Digest')).toEqual([]);
  });

  it('contact topics over the API: set, clear, unknown topic is 404 with nothing written', async () => {
    await broadcast('Hello', ['dan@example.test']);
    const set = await api('PUT', '/audience/profiles/dan%40example.test/topics', {
      topics: { news: 'unsubscribed', offers: 'subscribed' },
    });
    expect(set.status).toBe(200);
    const unknown = await api('PUT', '/audience/profiles/dan%40example.test/topics', {
      topics: { news: null, nope: 'subscribed' },
    });
    expect(unknown.status).toBe(404);
    const cleared = await api('PUT', '/audience/profiles/dan%40example.test/topics', {
      topics: { news: null },
    });
    const body = (await cleared.json()) as {
      data: { topics: Array<{ key: string; state: string; explicit: boolean }> };
    };
    expect(body.data.topics.map((t) => [t.key, t.state, t.explicit])).toEqual([
      ['news', 'subscribed', false],
      ['offers', 'subscribed', true],
    ]);
    const history = await mailroom.topics.history(secret, 'dan@example.test');
    expect(history.data.map((r) => [r.topic, r.state, r.source, r.userAgent])).toEqual([
      ['news', 'unsubscribed', 'api', 'topics-test/1'],
      ['offers', 'subscribed', 'api', 'topics-test/1'],
      ['news', null, 'api', 'topics-test/1'],
    ]);
    // Erasure: the states go, the history stays under a hash of the address.
    expect((await api('DELETE', '/audience/profiles/dan%40example.test')).status).toBe(200);
    expect((await mailroom.topics.history(secret, 'dan@example.test')).data).toEqual([]);
    expect(await mailroom.store.topicStates(projectId, 'dan@example.test')).toEqual([]);
  });

  it('includeUnsubscribed needs a full key: a sending key gets 403 and nothing is written', async () => {
    await mailroom.admin.createAudienceGroup(projectId, { ref: 'all' });
    const sending = await mailroom.keys.create(secret, { scope: 'sending' });
    const full = await mailroom.keys.create(secret, { scope: 'full' });
    const body = {
      subject: 'Legal notice',
      sender: SENDER,
      message: 'Terms changed',
      sources: [{ ref: 'all', includeUnsubscribed: true }],
    };
    const refused = await api('POST', '/send/mail/broadcast', body, sending.secret);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toMatch(/scope full/);
    expect((await mailroom.listMailings(secret, 'broadcast')).items).toHaveLength(0);
    // Without includeUnsubscribed the sending key may send; with a full key the admin act is allowed.
    expect(
      (await api('POST', '/send/mail/broadcast', { ...body, sources: [{ ref: 'all' }] }, sending.secret))
        .status,
    ).toBe(200);
    expect((await api('POST', '/send/mail/broadcast', body, full.secret)).status).toBe(200);
  });
});
