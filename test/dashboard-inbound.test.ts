import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { type MemoryTransport, memoryStore, memoryTransport } from '@mailroom/memory';
import { type InboundServer, inboundSmtpServer } from '@mailroom/smtp';
import Fastify, { type FastifyInstance } from 'fastify';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_SETUP_TIMEOUT_MS, launchChromium, watchedPage } from './support/chromium.js';
import { DashboardClient, signInWithForm } from './support/dashboard-session.js';
import { type DnsZoneServer, startDnsZone } from './support/dns-zone.js';
import { waitUntil } from './support/wait.js';

/**
 * Receiving mail on the dashboard (issue 40), in a real headless Chromium on 127.0.0.1: nodemailer sends
 * to the inbound listener (SPF and DMARC judged against a loopback DNS server); the Inbound page lists the
 * receiving domains, the routes and the messages with their authentication results; a message's page
 * shows its parsed fields and attachments; a sent message's page lists the reply linked to it. No
 * Content-Security-Policy violation, nothing loaded from elsewhere, every header value escaped.
 */

const ARTIFACTS = fileURLToPath(new URL('./.artifacts/', import.meta.url));
const INBOX = 'in.acme.test';

describe('dashboard: inbound', () => {
  let zone: DnsZoneServer;
  let mailroom: Mailroom;
  let transport: MemoryTransport;
  let listener: InboundServer;
  let app: FastifyInstance;
  let base: string;
  let context: BrowserContext;
  let page: Page;
  let profileDir: string;
  let secret: string;
  let otherSecret: string;
  let messageRef: string;
  let problems: string[];
  let foreign: string[];

  const send = (message: SendMailOptions) =>
    nodemailer
      .createTransport({ host: '127.0.0.1', port: listener.port, secure: false, ignoreTLS: true })
      .sendMail(message);

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    zone = await startDnsZone({
      'sender.test': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] },
      '_dmarc.sender.test': { TXT: ['v=DMARC1; p=reject'] },
      'bank.test': { TXT: ['v=spf1 ip4:192.0.2.1 -all'] },
      '_dmarc.bank.test': { TXT: ['v=DMARC1; p=reject'] },
    });
    transport = memoryTransport();
    mailroom = createMailroom({
      store: memoryStore(),
      transport,
      bounces: { domain: 'bounces.acme.test' },
      // Attachment links under the server's own URL (as `mailroom serve` sets it: its public URL).
      receiving: { resolver: zone.resolver(), baseUrl: () => base },
    });
    const acme = await mailroom.admin.createProject({ name: 'Acme' });
    secret = acme.secret;
    await mailroom.admin.addSender(acme.project.id, { address: 'help@acme.test' });
    await mailroom.receiving.addRoute(secret, {
      domain: INBOX,
      pattern: 'support',
      destination: { kind: 'store' },
    });
    await mailroom.receiving.addRoute(secret, {
      domain: INBOX,
      pattern: 'reply+*',
      destination: { kind: 'handler' },
    });
    otherSecret = (await mailroom.admin.createProject({ name: 'Other' })).secret;
    listener = await inboundSmtpServer({
      inbound: mailroom.inbound,
      receiving: mailroom.receiving,
      host: '127.0.0.1',
      port: 0,
    });

    // Listening before mail arrives: the attachment links are made at arrival, under its URL.
    app = Fastify();
    await app.register(mailroomPlugin, { mailroom });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

    // A message sent to Ana, then her reply (with the quoted original), then a forged bank mail.
    messageRef = (
      await mailroom.send(secret, {
        subject: 'Your ticket',
        sender: 'help@acme.test',
        message: '<p>We are on it.</p>',
        recipients: [{ address: 'ana@sender.test' }],
      })
    ).ref;
    await mailroom.worker.drain();
    const originalId = String(transport.lastMessageTo('ana@sender.test')?.messageId);
    await send({
      from: 'Ana <ana@sender.test>',
      to: `reply+ticket@${INBOX}`,
      subject: 'Re: Your ticket',
      inReplyTo: originalId,
      references: [originalId],
      text: 'Thanks, it works now!\n\nOn Sun, Nov 29, 2026 at 9:00 AM Acme <help@acme.test> wrote:\n> We are on it.\n',
    });
    await send({
      from: '"<img src=x onerror=alert(1)>" <alerts@bank.test>',
      to: `support@${INBOX}`,
      subject: '<script>alert(1)</script> Verify your account',
      text: 'Click here',
      attachments: [
        { filename: 'statement<1>.pdf', content: Buffer.alloc(1234, 1), contentType: 'application/pdf' },
      ],
    });
    await waitUntil(async () => (await mailroom.receiving.listMessages(secret)).items.length === 2);

    profileDir = mkdtempSync(join(tmpdir(), 'mailroom-chromium-'));
    context = await launchChromium(profileDir, { viewport: { width: 1280, height: 900 } });
    ({ page, problems, foreign } = await watchedPage(context, base));
  }, CHROMIUM_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await context?.close();
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    await app?.close();
    await listener?.close();
    await mailroom?.close();
    await zone?.close();
  });

  it('lists the receiving domains, the routes and the messages with their authentication results', async () => {
    await signInWithForm(page, base, secret);
    await page.click('nav >> text=Inbound');
    await page.waitForURL(`${base}/dashboard/inbound`);
    expect(await page.locator(`tr[data-receiving-domain="${INBOX}"]`).textContent()).toContain(
      `${INBOX} MX 10`,
    );
    const routes = await page.locator('tr[data-route] code').allTextContents();
    expect(routes).toEqual([`reply+*@${INBOX}`, `support@${INBOX}`]);
    const forged = page.locator('tr[data-inbound]', { hasText: 'Verify your account' });
    expect(await forged.locator('a').textContent()).toBe('<script>alert(1)</script> Verify your account');
    expect(await forged.locator('[data-auth-dmarc]').getAttribute('data-auth-dmarc')).toBe('fail');
    const reply = page.locator('tr[data-inbound]', { hasText: 'Re: Your ticket' });
    expect(await reply.locator('[data-auth-spf]').getAttribute('data-auth-spf')).toBe('pass');
    expect(await reply.textContent()).toContain(`reply to ${messageRef}`);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-inbound.png'), fullPage: true });
  });

  it("shows a received message's parsed fields and attachments, escaped", async () => {
    await page.click('tr[data-inbound] a >> text=Verify your account');
    await page.waitForURL(/\/dashboard\/inbound\/inm_/);
    expect(await page.textContent('h1')).toBe('<script>alert(1)</script> Verify your account');
    const facts = (await page.textContent('dl.facts')) ?? '';
    expect(facts).toContain('<img src=x onerror=alert(1)> <alerts@bank.test>');
    expect(facts).toContain('dmarc fail');
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.textContent('[data-text]')).toContain('Click here');
    const attachment = page.locator('table.cards tbody tr').first();
    expect(await attachment.textContent()).toContain('statement<1>.pdf');
    expect(await attachment.textContent()).toContain('1234 bytes');
    // Its name, type, size and signed link, which downloads the bytes sent (no session or key needed).
    const row = page.locator('[data-attachments] tr[data-attachment]');
    expect(await row.count()).toBe(1);
    expect(await row.locator('td[data-label="Type"]').textContent()).toBe('application/pdf');
    const href = (await row.locator('a[data-attachment-url]').getAttribute('href')) ?? '';
    expect(href.startsWith(`${base}/inbound/attachments/`)).toBe(true);
    expect(await row.locator('[data-copy]').getAttribute('data-copy')).toBe(href);
    expect(await row.textContent()).toContain('expires');
    const download = await fetch(href);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.alloc(1234, 1))).toBe(true);
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      row.locator('a[data-attachment-url]').click(),
    ]);
    // Chromium replaces the characters a file name may not hold.
    expect(file.suggestedFilename()).toMatch(/^statement.1.\.pdf$/);
  });

  it("lists the reply on the sent message's page, linked to the received message", async () => {
    await page.goto(`${base}/dashboard/messages/${messageRef}`);
    const replies = page.locator('[data-replies] tr[data-reply]');
    expect(await replies.count()).toBe(1);
    expect(await replies.textContent()).toContain('ana@sender.test');
    expect(await replies.textContent()).toContain('Thanks, it works now!');
    expect(await replies.textContent()).not.toContain('We are on it');
    // The delivery's own page lists it too.
    await page.goto(`${base}/dashboard/messages/${messageRef}/delivery?address=ana%40sender.test`);
    expect(await page.locator('[data-replies] tr[data-reply]').textContent()).toContain(
      'Thanks, it works now!',
    );
    await page.goto(`${base}/dashboard/messages/${messageRef}`);
    await replies.locator('a').click();
    await page.waitForURL(/\/dashboard\/inbound\/inm_/);
    expect(await page.textContent('[data-stripped]')).toBe('Thanks, it works now!');
    expect(await page.locator('[data-replied-to]').getAttribute('data-replied-to')).toBe(messageRef);
    expect(problems).toEqual([]);
    expect(foreign).toEqual([]);
  });

  it('shows the receiving settings and saves them with the form; a read key may look, not change', async () => {
    await page.goto(`${base}/dashboard/inbound`);
    await page.click('a[data-inbound-settings]');
    await page.waitForURL(`${base}/dashboard/inbound/settings`);
    expect(await page.textContent('[data-setting="retention_days"]')).toContain("engine's default");
    expect(await page.textContent('[data-setting="max_message_bytes"]')).toContain('26214400 bytes');
    expect(await page.textContent('[data-setting="reply_domain"]')).toBe('off');

    await page.fill('#retention_days', '30');
    await page.fill('#max_message_bytes', '1048576');
    await page.fill('#reply_domain', INBOX);
    await page.click('[data-settings-form] button[type=submit]');
    await page.waitForURL(`${base}/dashboard/inbound/settings?done=save`);
    expect(await page.textContent('[role=status]')).toBe('Settings saved.');
    expect(await page.textContent('[data-setting="retention_days"]')).toContain("30 days (this project's)");
    expect(await page.textContent('[data-setting="reply_domain"]')).toBe(`reply+<delivery id>@${INBOX}`);
    const saved = await mailroom.receiving.getSettings(secret);
    expect(saved).toMatchObject({ retention_days: 30, max_message_bytes: 1048576, reply_domain: INBOX });

    // Refused by the API's checks: the page says which field, nothing changes.
    await page.fill('#retention_days', '0');
    await page.fill('#reply_domain', 'no-route.test');
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.click('[data-settings-form] button[type=submit]'),
    ]);
    expect(answer.status()).toBe(422);
    expect(await page.textContent('[role=alert]')).toContain('retention_days');
    expect(await mailroom.receiving.getSettings(secret)).toMatchObject({
      retention_days: 30,
      reply_domain: INBOX,
    });

    // An empty field goes back to the engine's default.
    await page.goto(`${base}/dashboard/inbound/settings`);
    await page.fill('#max_message_bytes', '');
    await page.click('[data-settings-form] button[type=submit]');
    await page.waitForURL(`${base}/dashboard/inbound/settings?done=save`);
    expect((await mailroom.receiving.getSettings(secret)).max_message_bytes).toBeNull();
    expect(problems).toEqual([]);
    expect(foreign).toEqual([]);

    const reader = new DashboardClient(base);
    await reader.signIn((await mailroom.keys.create(secret, { scope: 'read' })).secret);
    const shown = await reader.get('/dashboard/inbound/settings');
    expect(shown.status).toBe(200);
    expect(await shown.text()).toContain('30 days');
    const csrf = await reader.csrf('/dashboard/inbound/settings');
    const refused = await reader.post('/dashboard/inbound/settings', { _csrf: csrf, retention_days: '1' });
    expect(refused.status).toBe(403);
    expect((await mailroom.receiving.getSettings(secret)).retention_days).toBe(30);
  });

  it("answers 404 for another project's received message", async () => {
    const id = (await mailroom.receiving.listMessages(secret)).items[0]?.id ?? '';
    const client = new DashboardClient(base);
    await client.signIn(otherSecret);
    expect((await client.get(`/dashboard/inbound/${id}`)).status).toBe(404);
    expect(await (await client.get('/dashboard/inbound')).text()).not.toContain(INBOX);
  });
});
