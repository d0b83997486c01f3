import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroomClient } from '@mailroom/client';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { mailroomRouter } from '@mailroom/http/express';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import express from 'express';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_SETUP_TIMEOUT_MS, launchChromium } from './support/chromium.js';
import { DashboardClient } from './support/dashboard-session.js';
import { type SmtpSink, startSmtpSink, toReceivedMessage } from './support/smtp-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * The hosted preference centre (issue 38) end to end: a real SMTP sink, SQLite, Express on loopback and
 * Chromium. The link comes from a delivered message; two topics are changed with the keyboard alone and
 * saved; the store, the events (through a webhook) and the next topic broadcasts agree. Also: the footer's
 * `{{ unsubscribe_url }}` of a topic broadcast leaves that topic only; hostile project and topic names are
 * escaped; forged and foreign tokens are 404, an erased contact's 410, a POST without the page's CSRF token
 * 403 with nothing written; the contact's `locale` trait picks the language; the page fits a phone and
 * loads nothing but itself.
 */

const PREFIX = '/api';
const SENDER = 'news@acme.test';
const HOSTILE_PROJECT = 'Acme & <Co> <script>alert("p")</script>';
const HOSTILE_TOPIC = 'News <script>alert("x")</script> & <img src=x onerror=alert(1)>';
const HOSTILE_DESCRIPTION = '<b onmouseover=alert(2)>What we ship</b>';
// A 1x1 PNG: the logo is kept inline, so the page loads nothing from another host.
const LOGO =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const FOOTER =
  '<p>Hello</p><p><a href="{{ preferences_url }}">Manage preferences</a> · <a href="{{ unsubscribe_url }}">Unsubscribe</a></p>';

interface Browser {
  document: { documentElement: { scrollWidth: number }; activeElement: { id?: string } | null };
  innerWidth: number;
}

describe('the preference centre in Chromium', () => {
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  let mailroom: Mailroom;
  let server: Server;
  let browser: BrowserContext;
  let profileDir: string;
  let port = 0;
  let secret: string;
  let projectId: string;

  const base = () => `http://127.0.0.1:${port}${PREFIX}`;

  async function api(method: string, path: string, body?: unknown): Promise<Response> {
    return fetch(`${base()}${path}`, {
      method,
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  async function broadcast(subject: string, recipients: string[], topic: string): Promise<void> {
    const res = await api('POST', '/send/mail/broadcast', {
      subject,
      sender: SENDER,
      message: FOOTER,
      recipients: recipients.map((address) => ({ address })),
      options: { topic },
    });
    expect(res.status).toBe(200);
    await mailroom.worker.drain();
  }

  const received = (subject: string) =>
    sink.messages
      .filter((m) => m.parsed.subject === subject)
      .flatMap((m) => m.envelope.rcptTo)
      .sort();

  /** The links of the message `subject` to `to`, as a mail client reads them from the parsed message. */
  function linksOf(
    subject: string,
    to: string,
  ): { preferences: string; unsubscribe: string; header: string } {
    const message = sink.messages.find((m) => m.parsed.subject === subject && m.envelope.rcptTo.includes(to));
    if (!message) throw new Error(`no ${subject} to ${to}`);
    const htmlBody = typeof message.parsed.html === 'string' ? message.parsed.html : '';
    const hrefs = [...htmlBody.matchAll(/href="([^"]+)"/g)].map((m) =>
      (m[1] as string).replaceAll('&amp;', '&'),
    );
    const header = /^<([^>]+)>$/.exec(
      toReceivedMessage(message.parsed).headers['list-unsubscribe'] ?? '',
    )?.[1];
    return { preferences: hrefs[0] ?? '', unsubscribe: hrefs[1] ?? '', header: header ?? '' };
  }

  async function contactTopics(address: string) {
    return Object.fromEntries(
      (await mailroom.topics.contactTopics(secret, address)).map((t) => [t.key, [t.state, t.explicit]]),
    );
  }

  /** Presses Tab until the element with `id` has the focus (at most 12 times). */
  async function tabTo(page: Page, id: string): Promise<void> {
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(
        () => (globalThis as unknown as Browser).document.activeElement?.id ?? '',
      );
      if (focused === id) return;
    }
    throw new Error(`Tab never reached #${id}`);
  }

  beforeAll(async () => {
    sink = await startSmtpSink();
    receiver = await startWebhookReceiver();
    const dbPath = join(mkdtempSync(join(tmpdir(), 'mailroom-prefs-')), 'mailroom.db');
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
    const created = await mailroom.admin.createProject({ name: HOSTILE_PROJECT });
    secret = created.secret;
    projectId = created.project.id;
    await mailroom.admin.addSender(projectId, { address: SENDER });
    const topics = [
      { key: 'news', name: HOSTILE_TOPIC, description: HOSTILE_DESCRIPTION, default: 'opt-out' },
      { key: 'offers', name: 'Offers', description: 'Discounts, now and then', default: 'opt-in' },
      { key: 'tips', name: 'Tips', default: 'opt-in' },
      { key: 'internal', name: 'Internal', default: 'opt-out', visibility: 'private' },
    ];
    for (const topic of topics) expect((await api('POST', '/topics', topic)).status).toBe(200);
    // The brand through the typed client (PATCH /project/brand); a bad colour or a remote logo is refused.
    const client = createMailroomClient({ url: base(), key: secret });
    const { brand } = await client.topics.setBrand({ color: '#ffd400', logo: LOGO });
    expect(brand).toEqual({ name: HOSTILE_PROJECT, color: '#ffd400', logo: LOGO });
    for (const bad of [{ color: 'red' }, { logo: 'https://cdn.example/logo.png' }]) {
      expect((await api('PATCH', '/project/brand', bad)).status).toBe(400);
    }
    expect((await client.topics.brand()).brand.color).toBe('#ffd400');
    const hook = await mailroom.webhooks.add(secret, {
      url: receiver.url,
      events: ['contact.topics_changed', 'contact.unsubscribed'],
    });
    receiver.secret = hook.secret;
    profileDir = mkdtempSync(join(tmpdir(), 'mailroom-prefs-chromium-'));
    mkdirSync(profileDir, { recursive: true });
    browser = await launchChromium(profileDir, { viewport: { width: 360, height: 740 } });
  }, CHROMIUM_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await mailroom?.close();
    await sink?.close();
    await receiver?.close();
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  });

  it('changes two topics with the keyboard alone; the store, the events and the next broadcasts agree', async () => {
    await broadcast('News 1', ['ann@example.test', 'bob@example.test'], 'news');
    expect(received('News 1')).toEqual(['ann@example.test', 'bob@example.test']);
    const { preferences } = linksOf('News 1', 'ann@example.test');
    expect(preferences).toMatch(new RegExp(`^${base()}/preferences/p1\\.[A-Za-z0-9_-]+$`));
    // The same contact, the same link, whatever the message; another contact, another link.
    expect(linksOf('News 1', 'bob@example.test').preferences).not.toBe(preferences);

    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    const response = await page.goto(preferences);
    expect(response?.status()).toBe(200);
    const headers = response?.headers() ?? {};
    expect(headers['content-security-policy']).toContain("default-src 'none'");
    expect(headers['referrer-policy']).toBe('no-referrer');
    // Nothing but the page itself was loaded (the logo is inline).
    expect(requested).toEqual([preferences]);
    expect(await page.locator('html').getAttribute('lang')).toBe('en');

    // The hostile names are text, never markup: no script element, no injected image or bold.
    expect(await page.locator('script').count()).toBe(0);
    expect(await page.locator('img').count()).toBe(1);
    expect(await page.locator('img').getAttribute('src')).toBe(LOGO);
    expect(await page.locator('b').count()).toBe(0);
    expect(await page.locator('header .project').textContent()).toBe(HOSTILE_PROJECT);
    expect(await page.title()).toBe(`Email preferences · ${HOSTILE_PROJECT}`);

    // The public topics, labelled, in a fieldset with its legend; the private one is not shown.
    expect(await page.locator('fieldset legend').first().textContent()).toBe('I want to receive');
    const news = page.getByLabel(HOSTILE_TOPIC);
    const offers = page.getByLabel('Offers');
    const tips = page.getByLabel('Tips');
    expect(await news.isChecked()).toBe(true);
    expect(await offers.isChecked()).toBe(false);
    expect(await tips.isChecked()).toBe(false);
    expect(await page.getByLabel('Internal').count()).toBe(0);
    expect(await page.locator(`#${await news.getAttribute('aria-describedby')}`).textContent()).toBe(
      HOSTILE_DESCRIPTION,
    );
    // The yellow brand colour: the buttons take near-black text (contrast), not white.
    const colors = await page.getByRole('button', { name: 'Save preferences' }).evaluate((b) => {
      const style = (
        globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }
      ).getComputedStyle(b);
      return style.color;
    });
    expect(colors).toBe('rgb(17, 17, 17)');
    // A phone's width: nothing wider than the window.
    expect(
      await page.evaluate(() => {
        const b = globalThis as unknown as Browser;
        return b.document.documentElement.scrollWidth <= b.innerWidth;
      }),
    ).toBe(true);

    // The keyboard alone: Tab to each box, Space to flip it, Tab to the button, Enter.
    const newsId = (await news.getAttribute('id')) as string;
    const offersId = (await offers.getAttribute('id')) as string;
    await tabTo(page, newsId);
    await page.keyboard.press('Space');
    await tabTo(page, offersId);
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab'); // tips
    await page.keyboard.press('Tab'); // save
    const [saved] = await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(saved?.status()).toBe(200);
    expect(await page.getByRole('status').textContent()).toBe('Your preferences are saved.');
    expect(await page.getByLabel(HOSTILE_TOPIC).isChecked()).toBe(false);
    expect(await page.getByLabel('Offers').isChecked()).toBe(true);

    // The store: the two choices, explicit; the rest at their defaults.
    expect(await contactTopics('ann@example.test')).toEqual({
      news: ['unsubscribed', true],
      offers: ['subscribed', true],
      tips: ['unsubscribed', false],
      internal: ['subscribed', false],
    });
    const history = (await mailroom.topics.history(secret, 'ann@example.test')).data;
    expect(history).toHaveLength(2);
    for (const record of history) {
      expect(record).toMatchObject({
        change: 'topic',
        source: 'preference-page',
        ip: expect.stringMatching(/127\.0\.0\.1/),
        userAgent: expect.stringContaining('Chrome'),
      });
    }
    expect(history.map((r) => [r.topic, r.state]).sort()).toEqual([
      ['news', 'unsubscribed'],
      ['offers', 'subscribed'],
    ]);
    // The events, through the webhook, signed.
    await mailroom.webhooks.drain();
    const changed = receiver.received.filter((r) => r.payload.type === 'contact.topics_changed');
    expect(changed).toHaveLength(1);
    expect(changed[0]?.verified).toBe(true);
    expect(changed[0]?.payload.data).toMatchObject({
      address: 'ann@example.test',
      source: 'preference-page',
    });
    expect(changed[0]?.payload.data.topics).toHaveLength(2);

    // Saving the same again changes, records and announces nothing.
    await Promise.all([
      page.waitForNavigation(),
      page.getByRole('button', { name: 'Save preferences' }).click(),
    ]);
    expect(await page.getByRole('status').textContent()).toContain('Nothing changed');
    expect((await mailroom.topics.history(secret, 'ann@example.test')).data).toHaveLength(2);

    // The next topic broadcasts agree with the page.
    await broadcast('News 2', ['ann@example.test', 'bob@example.test'], 'news');
    await broadcast('Offers 1', ['ann@example.test', 'bob@example.test'], 'offers');
    expect(received('News 2')).toEqual(['bob@example.test']);
    expect(received('Offers 1')).toEqual(['ann@example.test']);

    // "Unsubscribe from everything", with the keyboard too: no broadcast reaches Ann, whatever the topic.
    await page.getByRole('button', { name: 'Unsubscribe from everything' }).focus();
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(await page.getByRole('status').textContent()).toContain('You are unsubscribed from everything');
    expect((await mailroom.store.getProfile(projectId, 'ann@example.test'))?.status).toBe('unsubscribed');
    await broadcast('Offers 2', ['ann@example.test'], 'offers');
    expect(received('Offers 2')).toEqual([]);
    expect((await mailroom.topics.history(secret, 'ann@example.test')).data.at(-1)).toMatchObject({
      change: 'unsubscribe',
      source: 'preference-page',
    });
    await page.close();
  });

  it("the footer's unsubscribe_url of a topic broadcast leaves that topic only (one-click POST)", async () => {
    await broadcast('Tips 0', ['cat@example.test'], 'news');
    const { unsubscribe, header } = linksOf('Tips 0', 'cat@example.test');
    // The footer prints the very link the List-Unsubscribe header names.
    expect(unsubscribe).toBe(header);
    expect(unsubscribe).toMatch(new RegExp(`^${base()}/unsubscribe/`));
    const res = await fetch(unsubscribe, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(res.status).toBe(200);
    expect(await contactTopics('cat@example.test')).toMatchObject({
      news: ['unsubscribed', true],
      internal: ['subscribed', false],
    });
    expect((await mailroom.store.getProfile(projectId, 'cat@example.test'))?.status).toBe('subscribed');
  });

  it('answers forged and foreign tokens 404, a POST without the CSRF token 403, an erased contact 410', async () => {
    await broadcast('News 3', ['dan@example.test', 'eve@example.test'], 'news');
    const dan = linksOf('News 3', 'dan@example.test').preferences;
    const eve = linksOf('News 3', 'eve@example.test').preferences;
    const token = dan.slice(dan.lastIndexOf('/') + 1);

    // One byte changed anywhere: 404, the same page for every kind of wrong.
    const flipped = `${token.slice(0, 20)}${token[20] === 'A' ? 'B' : 'A'}${token.slice(21)}`;
    for (const bad of [flipped, 'p1.AAAA', `${token}x`, 'nothing']) {
      const res = await fetch(`${base()}/preferences/${bad}`);
      expect(res.status).toBe(404);
      expect(await res.text()).toContain('This link is not valid.');
    }
    // A token of another installation (another secret): 404.
    const other = createMailroom({
      store: sqlStore({ url: join(mkdtempSync(join(tmpdir(), 'mailroom-prefs-other-')), 'm.db') }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      unsubscribe: { baseUrl: base() },
    });
    const foreignProject = await other.admin.createProject({ name: 'Other' });
    const foreign = await other.preferencesUrl(foreignProject.secret, 'dan@example.test');
    await other.close();
    expect((await fetch(`${base()}/preferences/${foreign.slice(foreign.lastIndexOf('/') + 1)}`)).status).toBe(
      404,
    );

    // A POST without the page's token, or with another contact's page's token: 403, nothing written.
    const page = await browser.newPage();
    await page.goto(eve);
    const eveCsrf = (await page.locator('input[name=_csrf]').first().getAttribute('value')) as string;
    await page.close();
    for (const body of [
      'action=unsubscribe-all',
      `_csrf=${encodeURIComponent(eveCsrf)}&action=unsubscribe-all`,
    ]) {
      const res = await fetch(dan, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
      expect(res.status).toBe(403);
      expect(await res.text()).toContain('nothing was saved');
    }
    expect((await mailroom.store.getProfile(projectId, 'dan@example.test'))?.status).toBe('subscribed');
    expect((await mailroom.topics.history(secret, 'dan@example.test')).data).toEqual([]);

    // Erased: the link is gone (410), and the address is never mailed again by mistake.
    expect((await api('DELETE', '/audience/profiles/dan%40example.test')).status).toBe(200);
    const gone = await fetch(dan);
    expect(gone.status).toBe(410);
    expect(await gone.text()).toContain('was erased');
    await broadcast('News 4', ['dan@example.test', 'eve@example.test'], 'news');
    expect(received('News 4')).toEqual(['eve@example.test']);
  });

  it("speaks the contact's language (its locale trait), English by default", async () => {
    await broadcast('News 5', ['fay@example.test', 'gus@example.test'], 'news');
    expect(
      (await api('PATCH', '/audience/profiles/fay%40example.test', { traits: { locale: 'de-AT' } })).status,
    ).toBe(200);
    expect(
      (await api('PATCH', '/audience/profiles/gus%40example.test', { traits: { locale: 'fr_CH' } })).status,
    ).toBe(200);
    const page = await browser.newPage();
    await page.goto(linksOf('News 5', 'fay@example.test').preferences);
    expect(await page.locator('html').getAttribute('lang')).toBe('de');
    expect(await page.locator('h1').textContent()).toBe('E-Mail-Einstellungen');
    expect(await page.getByRole('button', { name: 'Einstellungen speichern' }).count()).toBe(1);
    await page.goto(linksOf('News 5', 'gus@example.test').preferences);
    expect(await page.locator('html').getAttribute('lang')).toBe('fr');
    expect(await page.getByRole('button', { name: 'Me désabonner de tout' }).count()).toBe(1);
    await page.close();
  });

  it("the dashboard lists the topics and a contact's consent timeline, escaped", async () => {
    // A change over the API with a hostile user agent: kept as evidence, shown as text.
    const hostileAgent = '<script>alert("ua")</script>';
    const res = await fetch(`${base()}/audience/profiles/ann%40example.test/topics`, {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${secret}`,
        'content-type': 'application/json',
        'user-agent': hostileAgent,
      },
      body: JSON.stringify({ topics: { tips: 'subscribed' } }),
    });
    expect(res.status).toBe(200);
    const dashboard = new DashboardClient(base());
    await dashboard.signIn(secret);
    expect(dashboard.cookie).toBeDefined();
    const list = await (await dashboard.get('/dashboard/topics')).text();
    expect(list).toContain('<code>news</code>');
    expect(list).not.toContain('<script>');
    expect(list).toContain('News &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    const page = await dashboard.get('/dashboard/topics?address=ann%40example.test');
    expect(page.status).toBe(200);
    const body = await page.text();
    expect(body).not.toContain('<script>alert');
    expect(body).toContain('&lt;script&gt;alert(&quot;ua&quot;)&lt;/script&gt;');
    // The timeline in order: the page's two changes, its unsubscribe, the API's change.
    const sources = [...body.matchAll(/data-label="Source"><code>([^<]+)<\/code>/g)].map((m) => m[1]);
    expect(sources).toEqual(['preference-page', 'preference-page', 'preference-page', 'api']);
    expect(body).toContain('unsubscribed from everything');
  });
});
