import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom, manualClock } from '@mailroom/core';
import { parseSignupToken, signSignupToken } from '@mailroom/core/testing';
import { mailroomRouter } from '@mailroom/http/express';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

/**
 * Double opt-in and the public signup endpoint (issue 38) on SQLite, over HTTP (Express) and SMTP: a
 * signup through a form's public endpoint keeps the contact `pending` and mails a confirmation link (at
 * the sink, parsed with mailparser); a GET of the link (a link scanner) confirms nothing, the page's POST
 * confirms; pending contacts get no topic broadcast; an expired link's page sends a new link; a second
 * signup re-sends at most once per 10 minutes; forged, altered and foreign tokens are 404; known and
 * unknown addresses get byte-identical answers; the project's text is escaped on pages and in the mail.
 */

const PREFIX = '/api';
const SENDER = 'news@acme.test';
const ORIGIN = 'https://www.acme.test';
const HOSTILE_TOPIC = `News <script>alert("t")</script>`;
const HOSTILE_TEXT = `I agree <img src=x onerror=alert(1)> & "more"`;
const DAY = 24 * 3600_000;

describe('double opt-in through a public signup form', () => {
  let sink: SmtpSink;
  let mailroom: Mailroom;
  let server: Server;
  let port = 0;
  let secret: string;
  let formRef: string;
  const clock = manualClock(new Date());

  const base = () => `http://127.0.0.1:${port}${PREFIX}`;

  async function api(method: string, path: string, body?: unknown): Promise<Response> {
    return fetch(`${base()}${path}`, {
      method,
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  /**
   * A signup as a website's script posts it, from client address `ip` (through the trusted proxy); the
   * answer comes before the writes, so the engine's `settled` is awaited after it.
   */
  async function signup(email: string, ip: string, extra: Record<string, string> = {}, origin = ORIGIN) {
    const res = await post(email, ip, extra, origin);
    await mailroom.signups.settled();
    return res;
  }

  function post(email: string, ip: string, extra: Record<string, string>, origin: string) {
    return fetch(`${base()}/subscribe/${formRef}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin,
        'x-forwarded-for': ip,
        'user-agent': 'SignupBrowser/1',
      },
      body: JSON.stringify({ email, ...extra }),
    });
  }

  const mailsTo = (address: string) => sink.messages.filter((m) => m.envelope.rcptTo.includes(address));

  /** The confirmation link of the `n`-th message to `address` (the HTML part, parsed by mailparser). */
  function confirmUrl(address: string, n = 0): string {
    const message = mailsTo(address)[n];
    if (!message) throw new Error(`no message ${n} to ${address}`);
    const m = /href="([^"]*\/confirm\/[^"]+)"/.exec(String(message.parsed.html));
    if (!m?.[1]) throw new Error('no confirmation link in the message');
    return m[1];
  }

  async function stateOf(address: string): Promise<string | undefined> {
    const topics = await mailroom.topics.contactTopics(secret, address);
    return topics.find((t) => t.key === 'news')?.state;
  }

  async function eventTypes(address: string): Promise<string[]> {
    const page = await mailroom.listEvents(secret, { limit: 100 });
    return page.items.filter((e) => e.data.address === address).map((e) => e.type);
  }

  async function topicBroadcast(subject: string, recipients: string[]): Promise<string[]> {
    const res = await api('POST', '/send/mail/broadcast', {
      subject,
      sender: SENDER,
      message: '<p>Hello</p>',
      recipients: recipients.map((address) => ({ address })),
      options: { topic: 'news' },
    });
    expect(res.status).toBe(200);
    await mailroom.worker.drain();
    return sink.messages
      .filter((m) => m.parsed.subject === subject)
      .flatMap((m) => m.envelope.rcptTo)
      .sort();
  }

  beforeAll(async () => {
    sink = await startSmtpSink();
    const dbPath = join(mkdtempSync(join(tmpdir(), 'mailroom-signup-')), 'mailroom.db');
    mailroom = createMailroom({
      store: sqlStore({ url: dbPath }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      clock,
      signup: { baseUrl: base },
    });
    const app = express();
    // The per-address limit is wall-clock time and tested in signup-flood.exclusive.test.ts; here the
    // engine's clock moves, so it is lifted.
    app.use(
      PREFIX,
      mailroomRouter(mailroom, {
        trustProxy: ['127.0.0.1'],
        signupRateLimit: { perAddress: { perMinute: 600, burst: 100 } },
      }),
    );
    server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(0, '127.0.0.1', (error?: Error) => (error ? reject(error) : resolve(s)));
    });
    port = (server.address() as AddressInfo).port;
    const created = await mailroom.admin.createProject({ name: 'Acme <b>&</b> Co' });
    secret = created.secret;
    await mailroom.admin.addSender(created.project.id, { address: SENDER });
    expect(
      (await api('POST', '/topics', { key: 'news', name: HOSTILE_TOPIC, doubleOptIn: true })).status,
    ).toBe(200);
    expect((await api('POST', '/audience/groups', { ref: 'readers', name: 'Readers' })).status).toBe(200);
    const res = await api('POST', '/forms', {
      name: 'Footer form',
      topic: 'news',
      group: 'readers',
      allowedOrigins: [ORIGIN],
      consentText: HOSTILE_TEXT,
      sender: SENDER,
    });
    expect(res.status).toBe(200);
    const form = ((await res.json()) as { data: { form: { ref: string; consentVersion: number } } }).data
      .form;
    expect(form.consentVersion).toBe(1);
    formRef = form.ref;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await mailroom.close();
    await sink.close();
  });

  it('signup over HTTP: pending, one confirmation mail; GET confirms nothing; the POST confirms', async () => {
    const res = await signup('ann@example.test', '198.51.100.1');
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(await stateOf('ann@example.test')).toBe('pending');
    await mailroom.worker.drain();
    await sink.waitFor(1);
    const mail = mailsTo('ann@example.test');
    expect(mail).toHaveLength(1);
    const message = mail[0]?.parsed;
    expect(message?.subject).toBe('Please confirm your subscription');
    // The project's text is escaped in the mail: the consent text's tag is text, not markup.
    expect(String(message?.html)).not.toContain('<img src=x');
    expect(String(message?.html)).toContain('&lt;img src=x onerror=alert(1)&gt;');
    const url = confirmUrl('ann@example.test');
    expect(url.startsWith(`${base()}/confirm/`)).toBe(true);

    // Pending contacts receive no topic broadcast (bob opted in through the API).
    await mailroom.topics.setContactTopics(secret, 'bob@example.test', { news: 'subscribed' });
    expect(await topicBroadcast('While pending', ['ann@example.test', 'bob@example.test'])).toEqual([
      'bob@example.test',
    ]);

    // A link scanner GETs (and HEADs) the link: a page with a button, nothing confirmed.
    const page = await fetch(url, { headers: { 'user-agent': 'LinkScanner/1' } });
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain('<button type="submit">Confirm my subscription</button>');
    expect(text).not.toContain('<script>alert');
    expect(text).toContain('&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt;');
    expect(text).toContain('Acme &lt;b&gt;&amp;&lt;/b&gt; Co');
    expect((await fetch(url, { method: 'HEAD' })).status).toBe(200);
    expect(await stateOf('ann@example.test')).toBe('pending');
    expect(await eventTypes('ann@example.test')).not.toContain('contact.confirmed');

    // The button's POST confirms (a second later: the history lists by time, then by id).
    clock.advance(1000);
    const confirmed = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'AnnBrowser/2' },
      body: '',
    });
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain('Subscription confirmed');
    expect(await stateOf('ann@example.test')).toBe('subscribed');
    const types = await eventTypes('ann@example.test');
    expect(types).toEqual(expect.arrayContaining(['contact.subscribed', 'contact.confirmed']));
    const members = await mailroom.audience.listMembers(secret, 'readers');
    expect(members.items.map((m) => m.address)).toContain('ann@example.test');

    // The evidence: source, time, IP, user agent and the wording shown, for the signup and the confirmation.
    const history = (await mailroom.topics.history(secret, 'ann@example.test')).data;
    expect(history.map((r) => [r.change, r.state, r.source])).toEqual([
      ['signup', 'pending', `form:${formRef}`],
      ['confirm', 'subscribed', `form:${formRef}`],
    ]);
    expect(history[0]).toMatchObject({
      ip: '198.51.100.1',
      userAgent: 'SignupBrowser/1',
      wording: `v1: ${HOSTILE_TEXT}`,
    });
    expect(history[1]).toMatchObject({
      ip: '127.0.0.1',
      userAgent: 'AnnBrowser/2',
      wording: `v1: ${HOSTILE_TEXT}`,
    });

    // Confirming again changes nothing; the next topic broadcast reaches ann.
    await fetch(url, { method: 'POST' });
    expect((await mailroom.topics.history(secret, 'ann@example.test')).data).toHaveLength(2);
    expect(await topicBroadcast('After confirming', ['ann@example.test', 'bob@example.test'])).toEqual([
      'ann@example.test',
      'bob@example.test',
    ]);
  });

  it('a second signup re-sends the confirmation at most once per 10 minutes', async () => {
    const address = 'carol@example.test';
    for (let i = 0; i < 3; i++) expect((await signup(address, '198.51.100.2')).status).toBe(200);
    await mailroom.worker.drain();
    expect(mailsTo(address)).toHaveLength(1);
    clock.advance(9 * 60_000);
    expect((await signup(address, '198.51.100.3')).status).toBe(200);
    await mailroom.worker.drain();
    expect(mailsTo(address)).toHaveLength(1);
    clock.advance(61_000);
    expect((await signup(address, '198.51.100.4')).status).toBe(200);
    await mailroom.worker.drain();
    expect(mailsTo(address)).toHaveLength(2);
    expect(await stateOf(address)).toBe('pending');
  });

  it('an expired link confirms nothing and its page sends a new link that works', async () => {
    const address = 'dan@example.test';
    expect((await signup(address, '198.51.100.5')).status).toBe(200);
    await mailroom.worker.drain();
    const old = confirmUrl(address);
    clock.advance(7 * DAY + 1000);
    const page = await fetch(old);
    expect(page.status).toBe(410);
    const text = await page.text();
    expect(text).toContain('This link has expired');
    expect(text).toContain('<button type="submit">Send a new link</button>');
    const action = /<form method="post" action="([^"]+)">/.exec(text)?.[1];
    expect(action).toMatch(/\/resend$/);
    // The expired link's POST confirms nothing.
    expect((await fetch(old, { method: 'POST' })).status).toBe(410);
    expect(await stateOf(address)).toBe('pending');
    // "Send a new link": the form posts to <token>/resend, relative to the page.
    const resent = await fetch(new URL(action as string, old), { method: 'POST' });
    expect(resent.status).toBe(200);
    expect(await resent.text()).toContain('d***@example.test');
    await mailroom.worker.drain();
    expect(mailsTo(address)).toHaveLength(2);
    const fresh = confirmUrl(address, 1);
    expect(fresh).not.toBe(old);
    expect((await fetch(fresh, { method: 'POST' })).status).toBe(200);
    expect(await stateOf(address)).toBe('subscribed');
  });

  it('forged, altered and foreign tokens are 404 and change nothing', async () => {
    const address = 'erin@example.test';
    expect((await signup(address, '198.51.100.6')).status).toBe(200);
    await mailroom.worker.drain();
    const url = confirmUrl(address);
    const token = decodeURIComponent(url.slice(url.lastIndexOf('/') + 1));
    const parsed = parseSignupToken(token);
    expect(parsed).toBeDefined();
    const { signupId, expiresAt } = parsed as { signupId: string; expiresAt: number };
    const wrongKey = signSignupToken('another-installation-secret-0123456789', {
      projectId: 'prj_other',
      signupId,
      address,
      expiresAt,
    });
    const extended = `${signupId}.${(expiresAt + 30 * DAY).toString(36)}.${token.split('.')[2]}`;
    const flipped = `${token.slice(0, -2)}${token.endsWith('AA') ? 'AB' : 'AA'}`;
    const foreign = signSignupToken('another-installation-secret-0123456789', {
      projectId: 'prj_other',
      signupId: 'sgn_0000000000000000000000000',
      address,
      expiresAt,
    });
    for (const bad of [wrongKey, extended, flipped, foreign, 'nonsense', `${signupId}..`]) {
      for (const method of ['GET', 'POST']) {
        const res = await fetch(`${base()}/confirm/${encodeURIComponent(bad)}`, { method });
        expect(res.status, `${method} ${bad}`).toBe(404);
        expect(await res.text()).toContain('This confirmation link is not valid.');
      }
      expect(
        (await fetch(`${base()}/confirm/${encodeURIComponent(bad)}/resend`, { method: 'POST' })).status,
      ).toBe(404);
    }
    expect(await stateOf(address)).toBe('pending');
    expect(mailsTo(address)).toHaveLength(1);
  });

  it('known and unknown addresses get byte-identical answers; honeypot and origins', async () => {
    const answer = async (res: Response) => {
      const headers = [...res.headers.entries()].filter(([k]) => !['x-request-id', 'date'].includes(k));
      return { status: res.status, headers, body: await res.text() };
    };
    // ann is confirmed (known), zed was never seen (unknown); each from its own client address.
    const known = await answer(await signup('ann@example.test', '203.0.113.1'));
    const unknown = await answer(await signup('zed@example.test', '203.0.113.2'));
    expect(unknown).toEqual(known);
    expect(known.status).toBe(200);
    // The plain HTML form (no script) gets one thanks page for both, too.
    const formPost = async (email: string, ip: string) => {
      const res = await fetch(`${base()}/subscribe/${formRef}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip },
        body: new URLSearchParams({ email }).toString(),
      });
      await mailroom.signups.settled();
      return res;
    };
    const knownPage = await answer(await formPost('ann@example.test', '203.0.113.3'));
    const unknownPage = await answer(await formPost('yan@example.test', '203.0.113.4'));
    expect(unknownPage).toEqual(knownPage);
    expect(knownPage.body).toContain('Thank you');

    // A filled honeypot: the same answer, nothing stored, nothing mailed.
    const bot = await answer(
      await signup('bot@example.test', '203.0.113.5', { website: 'http://spam.test' }),
    );
    expect(bot).toEqual(known);
    await expect(mailroom.topics.contactTopics(secret, 'bot@example.test')).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });

    // Another origin: 403; the preflight of an allowed one answers CORS.
    expect((await signup('x@example.test', '203.0.113.6', {}, 'https://evil.test')).status).toBe(403);
    const preflight = await fetch(`${base()}/subscribe/${formRef}`, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    // An unknown form is 404.
    const res = await fetch(`${base()}/subscribe/frm_nope`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.7' },
      body: JSON.stringify({ email: 'x@example.test' }),
    });
    expect(res.status).toBe(404);
  });

  it('a new consent text is the next version; records keep the wording they were given', async () => {
    const res = await api('PATCH', `/forms/${formRef}`, { consentText: 'Version two' });
    expect(res.status).toBe(200);
    const form = (
      (await res.json()) as { data: { form: { consentVersion: number; consentTexts: unknown[] } } }
    ).data.form;
    expect(form.consentVersion).toBe(2);
    expect(form.consentTexts).toHaveLength(2);
    expect((await signup('fay@example.test', '198.51.100.8')).status).toBe(200);
    expect((await signup('gus@example.test', '198.51.100.9', { consent_version: '1' })).status).toBe(200);
    const wording = async (a: string) => (await mailroom.topics.history(secret, a)).data[0]?.wording;
    expect(await wording('fay@example.test')).toBe('v2: Version two');
    expect(await wording('gus@example.test')).toBe(`v1: ${HOSTILE_TEXT}`);
  });

  it('a group set to doubleOptIn: the membership waits for the link; a group broadcast skips the pending', async () => {
    const group = await api('POST', '/audience/groups', {
      ref: 'vip',
      name: 'VIP <i>list</i>',
      doubleOptIn: true,
    });
    expect(group.status).toBe(200);
    expect(
      ((await group.json()) as { data: { group: { doubleOptIn: boolean } } }).data.group.doubleOptIn,
    ).toBe(true);
    const created = await api('POST', '/forms', {
      name: 'VIP form',
      group: 'vip',
      consentText: 'VIP mail',
      sender: SENDER,
    });
    const vipForm = ((await created.json()) as { data: { form: { ref: string } } }).data.form.ref;
    const res = await fetch(`${base()}/subscribe/${vipForm}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.20' },
      body: JSON.stringify({ email: 'hal@example.test' }),
    });
    expect(res.status).toBe(200);
    await mailroom.signups.settled();
    await mailroom.worker.drain();
    expect(mailsTo('hal@example.test')).toHaveLength(1);
    const members = async () =>
      (await mailroom.audience.listMembers(secret, 'vip')).items.map((m) => m.address);
    expect(await members()).toEqual([]);
    const send = await api('POST', '/send/mail/broadcast', {
      subject: 'VIP news',
      sender: SENDER,
      message: '<p>Hi</p>',
      sources: [{ ref: 'vip' }],
    });
    expect(send.status).toBe(200);
    await mailroom.worker.drain();
    expect(sink.messages.filter((m) => m.parsed.subject === 'VIP news')).toHaveLength(0);

    const url = confirmUrl('hal@example.test');
    clock.advance(1000);
    const page = await (await fetch(url)).text();
    expect(page).toContain('VIP &lt;i&gt;list&lt;/i&gt;');
    expect(await members()).toEqual([]);
    expect((await fetch(url, { method: 'POST' })).status).toBe(200);
    expect(await members()).toEqual(['hal@example.test']);
    const history = (await mailroom.topics.history(secret, 'hal@example.test')).data;
    expect(history.map((r) => [r.change, r.state, r.source])).toEqual([
      ['signup', 'pending', `form:${vipForm}`],
      ['confirm', 'subscribed', `form:${vipForm}`],
    ]);
    expect(await eventTypes('hal@example.test')).toEqual(
      expect.arrayContaining(['contact.subscribed', 'contact.confirmed']),
    );
  });
});
