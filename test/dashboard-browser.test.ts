import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Mailroom } from '@mailroom/core';
import { createMailroom } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import Fastify, { type FastifyInstance } from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_SETUP_TIMEOUT_MS, launchChromium, watchedPage } from './support/chromium.js';

/**
 * The dashboard in a real headless Chromium: sign-in (a wrong secret refused), a 300-recipient broadcast
 * started through the API whose progress bar reaches 100 % on the page without a reload, a kept message
 * previewed in its sandboxed frame, the copy button, phone width, another project's URL, sign-out. Pages
 * must run without a single Content-Security-Policy violation. Screenshots go to test/.artifacts/.
 */

const ARTIFACTS = fileURLToPath(new URL('./.artifacts/', import.meta.url));
const SENDER = 'news@acme.test';
/**
 * The page's globals that the tests read, typed by shape: this project's TypeScript has no DOM library.
 * (Functions, not strings, go to the page: a string would be evaluated, which the dashboard's policy forbids.)
 */
interface Browser {
  document: {
    querySelector(selector: string): { value?: number } | null;
    documentElement: { scrollWidth: number };
  };
  innerWidth: number;
  navigator: { clipboard: { readText(): Promise<string> } };
}

/**
 * The column headers in which a word is split across lines ("SCHE / DULE / D"): each word of each header's
 * text is measured as a DOM range; one that covers more than one line box was broken inside.
 */
const HEADERS_SPLIT_MID_WORD = () => {
  interface TextNode {
    data: string;
  }
  interface Range {
    setStart(node: TextNode, offset: number): void;
    setEnd(node: TextNode, offset: number): void;
    getClientRects(): { length: number; [i: number]: { top: number } };
  }
  const d = (
    globalThis as unknown as {
      document: {
        querySelectorAll(selector: string): Iterable<{ textContent: string | null }>;
        createTreeWalker(root: unknown, what: number): { nextNode(): TextNode | null };
        createRange(): Range;
      };
    }
  ).document;
  const split: string[] = [];
  for (const th of d.querySelectorAll('th')) {
    const walker = d.createTreeWalker(th, 4 /* NodeFilter.SHOW_TEXT */);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.data.matchAll(/\S+/g)) {
        const range = d.createRange();
        range.setStart(node, word.index ?? 0);
        range.setEnd(node, (word.index ?? 0) + word[0].length);
        const rects = range.getClientRects();
        const tops = new Set<number>();
        for (let i = 0; i < rects.length; i++) tops.add(Math.round(rects[i]?.top ?? 0));
        if (tops.size > 1) split.push(word[0]);
      }
    }
  }
  return split;
};

/** True when nothing on the page is wider than the window (no sideways scrolling on a phone). */
const FITS_THE_SCREEN = () => {
  const b = globalThis as unknown as Browser;
  return b.document.documentElement.scrollWidth <= b.innerWidth;
};

describe('dashboard in a browser', () => {
  let mailroom: Mailroom;
  let app: FastifyInstance;
  let base: string;
  let secret: string;
  let foreignRef: string;
  let profileDir: string;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];
  let broadcastRef = '';

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // 300 sends of 30 ms, two at a time: about five seconds of visible progress.
    mailroom = createMailroom({
      store: memoryStore(),
      transport: memoryTransport({ delayMs: 30 }),
      worker: { concurrency: 2, flushMs: 100, pollMs: 50 },
    });
    const acme = await mailroom.admin.createProject({ name: 'Acme' });
    secret = acme.secret;
    await mailroom.admin.addSender(acme.project.id, { address: SENDER, name: 'Acme News' });
    const other = await mailroom.admin.createProject({ name: 'Other' });
    await mailroom.admin.addSender(other.project.id, { address: 'hi@other.test' });
    foreignRef = (
      await mailroom.broadcast(other.secret, {
        subject: 'Other project news',
        sender: 'hi@other.test',
        message: 'Hello',
        recipients: ['x@other.test'],
      })
    ).ref;

    app = Fastify();
    await app.register(mailroomPlugin, { mailroom });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    mailroom.worker.start();

    profileDir = mkdtempSync(join(tmpdir(), 'mailroom-chromium-'));
    context = await launchChromium(profileDir, {
      viewport: { width: 1280, height: 900 },
    });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    ({ page, problems } = await watchedPage(context, base));
  }, CHROMIUM_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await context?.close();
    rmSync(profileDir, { recursive: true, force: true });
    await app?.close();
    await mailroom?.close();
  });

  it('refuses a wrong secret, then signs in with the right one', async () => {
    await page.goto(`${base}/dashboard`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    await page.fill('#secret', 'sk_live_this-is-not-the-secret-000000000000000');
    await page.click('button[type=submit]');
    await page.locator('[role=alert]').waitFor();
    expect(await page.textContent('[role=alert]')).toContain('not a valid project secret');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-sign-in-refused.png') });
    expect(await context.cookies(`${base}/dashboard/broadcasts`)).toEqual([]);

    await page.fill('#secret', secret);
    await page.click('button[type=submit]');
    await page.waitForURL(`${base}/dashboard/broadcasts`);
    expect(await page.textContent('h1')).toBe('Broadcasts');
    const [cookie] = await context.cookies(`${base}/dashboard/broadcasts`);
    expect(cookie).toMatchObject({ name: 'mailroom_dashboard', httpOnly: true, sameSite: 'Strict' });
    expect(cookie?.value).not.toContain(secret);
    // Project B's broadcast is not listed.
    expect(await page.content()).not.toContain('Other project news');
  });

  it('shows a 300-recipient broadcast progressing live to 100 %', async () => {
    const recipients = Array.from({ length: 300 }, (_, i) => ({
      address: `reader${String(i).padStart(3, '0')}@example.test`,
      name: `Reader ${i}`,
    }));
    const api = async (body: unknown) => {
      const res = await fetch(`${base}/send/mail/broadcast`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: { broadcastRef: string } }).data.broadcastRef;
    };
    const ref = await api({
      subject: 'Spring news for {{ recipient.firstName }}',
      sender: SENDER,
      message: '<h2>Hello {{ recipient.name }}</h2><p>Our spring collection is here.</p>',
      recipients: recipients.slice(0, 250),
      options: { storeContent: true },
    });
    await api({ broadcastRef: ref, recipients: recipients.slice(250) });
    broadcastRef = ref;

    await page.goto(`${base}/dashboard/broadcasts/${ref}`);
    const bar = page.locator('.progress progress');
    const initial = Number(await bar.getAttribute('value'));
    expect(initial).toBeLessThan(100);
    // The bar moves while the page stays loaded (polled every second).
    await page.waitForFunction(
      (start) => {
        const value =
          (globalThis as unknown as Browser).document.querySelector('.progress progress')?.value ?? 0;
        return value > start && value < 100;
      },
      initial,
      { timeout: 20_000 },
    );
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-broadcast-sending.png'), fullPage: false });
    await page.waitForFunction(
      () => (globalThis as unknown as Browser).document.querySelector('.progress progress')?.value === 100,
      undefined,
      { timeout: 30_000 },
    );
    await expect.poll(() => page.textContent('[data-status-badge]'), { timeout: 5_000 }).toBe('completed');
    expect(await page.textContent('[data-percent]')).toBe('100 %');
    expect(await page.textContent('[data-count="sent"]')).toBe('300');
    expect(await page.textContent('[data-count-total]')).toBe('300');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-broadcast-completed.png'), fullPage: true });

    // The copy button puts the ref on the clipboard.
    await page.click(`button[data-copy="${ref}"]`);
    await expect
      .poll(() => page.evaluate(() => (globalThis as unknown as Browser).navigator.clipboard.readText()))
      .toBe(ref);

    // Searching by address prefix, then a delivery and its message in the sandboxed frame.
    await page.fill('input[name=q]', 'reader12');
    await page.click('form.search button');
    await page.waitForURL(/q=reader12/);
    await expect.poll(() => page.locator('a[href*="delivery?address="]').count()).toBe(10);
    await page.click('a[href*="delivery?address=reader123"]');
    await page.waitForURL(/delivery\?address=reader123/);
    expect(await page.textContent('h1')).toBe('reader123@example.test');
    const frame = page.frameLocator('iframe.preview');
    await frame.locator('h2').waitFor();
    expect(await frame.locator('h2').textContent()).toBe('Hello Reader 123');
    expect(await page.locator('iframe.preview').getAttribute('sandbox')).toBe('');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-delivery-preview.png'), fullPage: true });

    // Phone width: nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/dashboard/broadcasts/${ref}`);
    expect(await page.evaluate(FITS_THE_SCREEN)).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-broadcast-phone.png'), fullPage: false });
    await page.goto(`${base}/dashboard/broadcasts`);
    expect(await page.evaluate(FITS_THE_SCREEN)).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-broadcasts-phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('keeps every column header word whole at 1280 px', async () => {
    const projectId = (await mailroom.authenticate(secret)).project.id;
    await mailroom.admin.createTemplate(projectId, {
      ref: 'monthly-newsletter-with-a-long-reference',
      format: 'text',
      source: 'Hello',
      subject: 'A rather long default subject line for {{ recipient.firstName }}, to squeeze the columns',
    });
    await mailroom.admin.createAudienceGroup(projectId, {
      ref: 'newsletter-subscribers-europe',
      name: 'Europe',
    });
    await mailroom.send(secret, {
      subject: 'Your receipt for order 2031-000123 of a long product name, with many words in it',
      sender: SENDER,
      message: 'Thanks',
      recipients: 'customer-with-a-long-address@example.test',
    });
    await page.setViewportSize({ width: 1280, height: 900 });
    await mailroom.suppressions.add(secret, { address: 'someone-with-a-long-address@example.test' });
    const pages = [
      'broadcasts',
      `broadcasts/${broadcastRef}`,
      'messages',
      'templates',
      'audience',
      'suppressions',
    ];
    for (const path of pages) {
      await page.goto(`${base}/dashboard/${path}`);
      expect(await page.locator('th').count(), path).toBeGreaterThan(0);
      expect(await page.evaluate(HEADERS_SPLIT_MID_WORD), path).toEqual([]);
    }
    await page.goto(`${base}/dashboard/broadcasts`);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-broadcasts-1280.png'), fullPage: false });
  });

  it('lifts a suppression with its button (the form posts from this origin with its token)', async () => {
    await mailroom.suppressions.add(secret, { address: 'lift-me@example.test', reason: 'complaint' });
    await page.goto(`${base}/dashboard/suppressions?q=lift-me`);
    expect(await page.locator('tbody tr').count()).toBe(1);
    await page.click('tbody tr button:has-text("Lift")');
    await page.waitForURL(`${base}/dashboard/suppressions?lifted=lift-me%40example.test`);
    expect(await page.textContent('[role=status]')).toBe('Lifted: lift-me@example.test may be mailed again.');
    expect((await mailroom.suppressions.list(secret, { q: 'lift-me' })).items).toEqual([]);
  });

  it("answers another project's broadcast URL with 404", async () => {
    const res = await page.goto(`${base}/dashboard/broadcasts/${foreignRef}`);
    expect(res?.status()).toBe(404);
    expect(await page.textContent('h1')).toBe('Not found');
    expect(await page.content()).not.toContain('Other project news');
  });

  it('signs out, after which the pages ask to sign in again', async () => {
    await page.goto(`${base}/dashboard/broadcasts`);
    await page.click('header form button');
    await page.waitForURL(`${base}/dashboard/sign-in`);
    expect(await context.cookies(`${base}/dashboard/broadcasts`)).toEqual([]);
    await page.goto(`${base}/dashboard/broadcasts`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
  });

  it('ran every page without a policy violation or a script error', () => {
    expect(problems).toEqual([]);
  });
});
