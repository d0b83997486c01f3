import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import Fastify, { type FastifyInstance } from 'fastify';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_SETUP_TIMEOUT_MS, launchChromium, watchedPage } from './support/chromium.js';
import { signInWithForm } from './support/dashboard-session.js';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

/**
 * A tracked link clicked in a real headless Chromium: the delivered message's HTML (from the SMTP sink,
 * parsed with mailparser) is shown the way a webmail would, a link in it is clicked, the browser lands on
 * the original page of a loopback server (through the 302, without a Referer), and the dashboard then
 * shows the click and the open.
 */

const SENDER = 'news@acme.test';
describe('tracking in a browser', () => {
  let sink: SmtpSink;
  let mailroom: Mailroom;
  let app: FastifyInstance;
  let landing: Server;
  let base = '';
  let site = '';
  let secret = '';
  let ref = '';
  let profileDir = '';
  let context: BrowserContext;
  let message = '';
  const landed: Array<{ url: string; headers: IncomingHttpHeaders }> = [];

  beforeAll(async () => {
    sink = await startSmtpSink();
    landing = createServer((req, res) => {
      if (req.url === '/message') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(message);
        return;
      }
      landed.push({ url: req.url ?? '', headers: req.headers });
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<h1>Landed</h1>');
    });
    await new Promise<void>((resolve) => landing.listen(0, '127.0.0.1', resolve));
    site = `http://127.0.0.1:${(landing.address() as AddressInfo).port}`;
    mailroom = createMailroom({
      store: sqlStore({ url: join(mkdtempSync(join(tmpdir(), 'mailroom-track-browser-')), 'mailroom.db') }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      tracking: { baseUrl: () => base, opens: true, clicks: true, flushMs: 20 },
    });
    app = Fastify();
    await app.register(mailroomPlugin, { mailroom });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    await mailroom.admin.addSender(created.project.id, { address: SENDER });
    ref = (
      await mailroom.broadcast(secret, {
        subject: 'Spring sale',
        sender: SENDER,
        message: `<html><body><h2>Hello {{ profile.firstName }}</h2><p><a id="sale" href="${site}/sale?src=mail&amp;id={{ profile.firstName }}">See the sale</a></p><p><a href="${site}/about">About us</a></p></body></html>`,
        recipients: [{ address: 'ann@example.test', name: 'Ann' }],
      })
    ).ref;
    await mailroom.worker.drain();
    const [delivered] = await sink.waitFor(1);
    message = String(delivered?.parsed.html);
    profileDir = mkdtempSync(join(tmpdir(), 'mailroom-chromium-'));
    context = await launchChromium(profileDir);
  }, CHROMIUM_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await context?.close();
    rmSync(profileDir, { recursive: true, force: true });
    await app?.close();
    await mailroom?.close();
    await new Promise((resolve) => landing?.close(resolve));
    await sink?.close();
  });

  it('follows a clicked link to the original page, and the dashboard shows the click', async () => {
    expect(message).toContain(`${base}/t/c/`);
    const { page } = await watchedPage(context, base);
    await page.goto(`${site}/message`);
    await page.click('#sale');
    await page.waitForURL(`${site}/sale?src=mail&id=Ann`);
    expect(await page.textContent('h1')).toBe('Landed');
    const visit = landed.find((l) => l.url.startsWith('/sale'));
    expect(visit?.url).toBe('/sale?src=mail&id=Ann');
    // The token never reaches the destination.
    expect(visit?.headers.referer).toBeUndefined();

    await signInWithForm(page, base, secret, '/dashboard');
    await expect
      .poll(
        async () => {
          await page.goto(`${base}/dashboard/broadcasts/${ref}`);
          return page
            .locator('[data-clicks-human]')
            .textContent({ timeout: 500 })
            .catch(() => null);
        },
        { timeout: 10_000 },
      )
      .toBe('1');
    expect(await page.textContent('[data-opens-human]')).toBe('1');
    expect(await page.textContent('[data-tracking] tbody tr:first-child td:first-child')).toBe(
      `${site}/sale?src=mail&id={{ profile.firstName }}`,
    );

    // The delivery's page lists the click and the open.
    await page.click('a[href*="delivery?address=ann"]');
    await page.locator('[data-delivery-tracking]').waitFor();
    expect(await page.textContent('[data-click="human"] td:first-child')).toBe(
      `${site}/sale?src=mail&id=Ann`,
    );
    expect(await page.locator('[data-open="human"]').count()).toBe(1);
  });
});
