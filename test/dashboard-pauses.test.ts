import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { memoryStore } from '@mailroom/memory';
import { smtpTransport } from '@mailroom/smtp';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_SETUP_TIMEOUT_MS, launchChromium, watchedPage } from './support/chromium.js';
import { DashboardClient, signInWithForm } from './support/dashboard-session.js';
import { listenMailroom } from './support/http-harness.js';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';
import { sleep, waitUntil } from './support/wait.js';

/**
 * Issue 31, pause and resume on the dashboard: the Pauses page lists what is paused (who, why, a guard's
 * rule with its figures, until when); its forms pause and resume the sending and destinations, a broadcast's
 * page pauses and resumes it; every form carries the session's CSRF token and needs a `full` key. Then in a
 * real Chromium: a broadcast being delivered to an smtp-server sink is paused and resumed by clicking, and
 * arrives whole, none twice.
 */

const ARTIFACTS = fileURLToPath(new URL('./.artifacts/', import.meta.url));
const SENDER = 'news@acme.test';
const COUNT = 150;
const ADDRESSES = Array.from({ length: COUNT }, (_, i) => `reader${String(i).padStart(3, '0')}@example.test`);

describe('pauses on the dashboard', () => {
  let mailroom: Mailroom;
  let sink: SmtpSink;
  let base: string;
  let close: () => Promise<void>;
  let secret: string;
  let readSecret: string;
  let projectId: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    mailroom = createMailroom({
      store: memoryStore(),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      worker: { ratePerSecond: 40, batchSize: 5, concurrency: 1, pollMs: 20 },
    });
    const acme = await mailroom.admin.createProject({ name: 'Acme' });
    secret = acme.secret;
    projectId = acme.project.id;
    await mailroom.admin.addSender(projectId, { address: SENDER, name: 'Acme News' });
    readSecret = (await mailroom.keys.create(secret, { scope: 'read' })).secret;
    ({ url: base, close } = await listenMailroom('fastify', mailroom, {}, ''));
  });

  afterAll(async () => {
    await close?.();
    await mailroom?.close();
    await sink?.close();
  });

  it('lists a guard pause with its rule, and pauses and resumes the sending and a destination by form', async () => {
    const now = new Date();
    await mailroom.store.addPause(
      {
        projectId,
        scope: 'destination',
        target: 'yahoo.com',
        domains: ['yahoo.com'],
        by: 'guard',
        reason: 'too many sender-side refusals',
        rule: {
          name: 'destination.sender-side',
          signal: 'sender-side',
          count: 12,
          attempts: 80,
          rate: 0.15,
          threshold: 0.1,
          minimum: 5,
          windowMs: 600_000,
          since: now.toISOString(),
        },
        createdAt: now,
        until: new Date(now.getTime() + 30 * 60_000),
      },
      now,
    );
    const user = new DashboardClient(base);
    await user.signIn(secret);
    const listed = await (await user.get('/dashboard/pauses')).text();
    expect(listed).toContain('Destination <span class="mono">yahoo.com</span>');
    expect(listed).toContain('reputation guard');
    expect(listed).toContain(
      'destination.sender-side: 12 sender-side of 80 attempts over 10 min (15.0% &gt; 10.0%, minimum 5)',
    );
    const csrf = await user.csrf('/dashboard/pauses');

    // Without the session's token, or from another site: refused, nothing paused.
    expect((await user.post('/dashboard/pauses/sending/pause', { reason: 'x' })).status).toBe(403);
    const crossSite = await user.post(
      '/dashboard/pauses/sending/pause',
      { _csrf: csrf, reason: 'x' },
      { 'sec-fetch-site': 'cross-site' },
    );
    expect(crossSite.status).toBe(403);
    expect((await mailroom.listPauses(secret)).map((p) => p.scope)).toEqual(['destination']);

    const paused = await user.post('/dashboard/pauses/sending/pause', { _csrf: csrf, reason: 'list audit' });
    expect(paused.status).toBe(303);
    expect(paused.headers.get('location')).toBe('/dashboard/pauses?done=sending-pause');
    const page = await (await user.get('/dashboard/pauses?done=sending-pause')).text();
    expect(page).toContain('Sending paused');
    expect(page).toContain('The whole sending');
    expect(page).toContain('list audit');
    expect(page).toContain('Resume sending');

    await user.post('/dashboard/pauses/destination/pause', {
      _csrf: csrf,
      name: 'microsoft',
      domains: 'outlook.com, hotmail.com',
      minutes: '45',
      reason: 'throttled',
    });
    const [, , microsoft] = await mailroom.listPauses(secret);
    expect(microsoft).toMatchObject({
      scope: 'destination',
      target: 'microsoft',
      domains: ['outlook.com', 'hotmail.com'],
      reason: 'throttled',
    });
    expect((microsoft?.until?.getTime() ?? 0) - Date.now()).toBeGreaterThan(44 * 60_000);
    expect(await (await user.get('/dashboard/pauses')).text()).toContain(
      'Destination <span class="mono">microsoft</span> (outlook.com, hotmail.com)',
    );
    // A bad figure is the engine's refusal, shown as a page; nothing changes.
    const bad = await user.post('/dashboard/pauses/destination/pause', {
      _csrf: csrf,
      name: 'x.test',
      minutes: '0',
    });
    expect(bad.status).toBe(400);
    expect(await mailroom.listPauses(secret)).toHaveLength(3);

    for (const name of ['microsoft', 'yahoo.com']) {
      const resumed = await user.post('/dashboard/pauses/destination/resume', { _csrf: csrf, name });
      expect(resumed.headers.get('location')).toBe('/dashboard/pauses?done=destination-resume');
    }
    await user.post('/dashboard/pauses/sending/resume', { _csrf: csrf });
    expect(await mailroom.listPauses(secret)).toEqual([]);
    expect(await (await user.get('/dashboard/pauses')).text()).toContain('Nothing is paused.');

    // A read key signs in and sees the page, but may not change anything.
    const reader = new DashboardClient(base);
    await reader.signIn(readSecret);
    const readerCsrf = await reader.csrf('/dashboard/pauses');
    const refused = await reader.post('/dashboard/pauses/sending/pause', { _csrf: readerCsrf });
    expect(refused.status).toBe(403);
    expect(await mailroom.listPauses(secret)).toEqual([]);
  });

  describe('in a browser', () => {
    let profileDir: string;
    let context: BrowserContext;
    let page: Page;
    let problems: string[];

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      profileDir = mkdtempSync(join(tmpdir(), 'mailroom-chromium-'));
      context = await launchChromium(profileDir, { viewport: { width: 1280, height: 900 } });
      ({ page, problems } = await watchedPage(context, base));
    }, CHROMIUM_SETUP_TIMEOUT_MS);

    afterAll(async () => {
      await context?.close();
      if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    });

    it('pauses a broadcast being delivered by a click, and resumes it: all arrive, none twice', async () => {
      sink.clear();
      await signInWithForm(page, base, secret);

      const { ref } = await mailroom.broadcast(secret, {
        subject: 'Spring news',
        sender: SENDER,
        message: '<p>Hello</p>',
        recipients: ADDRESSES.map((address) => ({ address })),
      });
      mailroom.worker.start();
      await sink.waitFor(10, 30_000);
      await page.goto(`${base}/dashboard/broadcasts/${ref}`);
      await page.fill('input[name=reason]', 'wrong price in the text');
      await page.click('button:has-text("Pause this broadcast")');
      await page.waitForURL(`${base}/dashboard/broadcasts/${ref}?done=broadcast-pause`);
      expect(await page.textContent('[data-broadcast-paused]')).toContain('Paused by an operator');
      expect(await page.textContent('[data-broadcast-paused]')).toContain('wrong price in the text');
      await page.screenshot({ path: join(ARTIFACTS, 'dashboard-broadcast-paused.png') });

      // In flight at the click: at most a batch; then nothing moves.
      await sleep(500);
      const atPause = sink.messages.length;
      await sleep(700);
      expect(sink.messages.length).toBe(atPause);
      expect(atPause).toBeLessThan(COUNT);

      // The Pauses page lists it, linked to the broadcast.
      await page.click('nav a:has-text("Pauses")');
      await page.waitForURL(`${base}/dashboard/pauses`);
      expect(await page.textContent(`tr[data-pause="broadcast:${ref}"]`)).toContain(
        'wrong price in the text',
      );
      await page.screenshot({ path: join(ARTIFACTS, 'dashboard-pauses.png') });

      await page.goto(`${base}/dashboard/broadcasts/${ref}`);
      await page.click('button:has-text("Resume this broadcast")');
      await page.waitForURL(`${base}/dashboard/broadcasts/${ref}?done=broadcast-resume`);
      expect(await page.content()).toContain('Broadcast resumed where it stopped.');
      await sink.waitFor(COUNT, 30_000);
      await waitUntil(async () => (await mailroom.getMailing(secret, ref)).status === 'completed', 30_000);
      const arrived = sink.messages.flatMap((m) => m.envelope.rcptTo);
      expect([...arrived].sort()).toEqual(ADDRESSES);
      expect(await mailroom.listPauses(secret)).toEqual([]);
      // A completed broadcast's page still offers Pause (a later batch would be held back).
      await page.reload();
      expect(await page.locator('button:has-text("Pause this broadcast")').count()).toBe(1);
      expect(problems).toEqual([]);
    }, 60_000);
  });
});
