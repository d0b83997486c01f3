import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMailroom, type Mailroom, manualClock, workflow } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import Fastify, { type FastifyInstance } from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_SETUP_TIMEOUT_MS, launchChromium, watchedPage } from './support/chromium.js';
import { DashboardClient, signInWithForm } from './support/dashboard-session.js';

/**
 * Automations on the dashboard (issue 39, "See it"), in a real headless Chromium on 127.0.0.1: the
 * workflows with their runs entered, waiting, done and exited; one workflow drawn as its steps (SVG) with
 * the runs waiting at each; its runs; a contact's automation timeline. No Content-Security-Policy
 * violation, nothing loaded from elsewhere, every name escaped, another project's workflow a 404.
 */

const ARTIFACTS = fileURLToPath(new URL('./.artifacts/', import.meta.url));
const SENDER = 'shop@acme.test';

describe('dashboard: automations', () => {
  let mailroom: Mailroom;
  let app: FastifyInstance;
  let base: string;
  let context: BrowserContext;
  let page: Page;
  let profileDir: string;
  let secret: string;
  let workflowId: string;
  let foreignId: string;
  let problems: string[];
  let foreign: string[];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const clock = manualClock(new Date('2031-03-01T09:00:00.000Z'));
    mailroom = createMailroom({ store: memoryStore(), transport: memoryTransport(), clock });
    const acme = await mailroom.admin.createProject({ name: 'Acme' });
    secret = acme.secret;
    await mailroom.admin.addSender(acme.project.id, { address: SENDER });
    await mailroom.admin.createTemplate(acme.project.id, {
      ref: 'cart-reminder',
      format: 'text',
      subject: 'You left something',
      source: 'Come back',
    });
    const created = await mailroom.automations.create(
      secret,
      workflow('Cart <b>reminder</b>')
        .on('cart.abandoned')
        .exitOn('order.placed')
        .wait('1h', { id: 'first-wait' })
        .send({ id: 'nudge', template: 'cart-reminder', sender: SENDER })
        .waitForEvent('order.placed', { id: 'wait-order', timeout: '24h' })
        .send({ id: 'last-call', template: 'cart-reminder', sender: SENDER })
        .build(),
    );
    workflowId = created.id;
    for (const [i, contact] of ['ana@example.test', 'bo@example.test', 'cy@example.test'].entries()) {
      await mailroom.track(secret, { event: 'cart.abandoned', contact, id: `cart-${i}` });
    }
    await mailroom.automations.runDue();
    // Cy buys during the first wait: the run exits at once.
    await mailroom.track(secret, { event: 'order.placed', contact: 'cy@example.test', id: 'order-1' });
    await mailroom.automations.runDue();
    // An hour later Ana's and Bo's nudges go out; both then wait for the order.
    clock.advance(3_600_000);
    await mailroom.automations.runDue();

    const other = await mailroom.admin.createProject({ name: 'Other' });
    foreignId = (
      await mailroom.automations.create(other.secret, workflow('Other flow').on('signup').wait('1h').build())
    ).id;

    app = Fastify();
    await app.register(mailroomPlugin, { mailroom });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

    profileDir = mkdtempSync(join(tmpdir(), 'mailroom-chromium-'));
    context = await launchChromium(profileDir, { viewport: { width: 1280, height: 900 } });
    ({ page, problems, foreign } = await watchedPage(context, base));
  }, CHROMIUM_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await context?.close();
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    await app?.close();
    await mailroom?.close();
  });

  it('lists the workflows with their runs entered, waiting, done and exited', async () => {
    await signInWithForm(page, base, secret);
    await page.click('nav >> text=Automations');
    await page.waitForURL(`${base}/dashboard/automations`);
    expect(await page.textContent('h1')).toBe('Automations');
    const row = page.locator(`tr[data-workflow="${workflowId}"]`);
    // The name is text, never markup.
    expect(await row.locator('a').textContent()).toBe('Cart <b>reminder</b>');
    expect(await row.locator('b').count()).toBe(4);
    const count = async (name: string) => row.locator(`[data-count="${name}"]`).textContent();
    expect([
      await count('entered'),
      await count('waiting'),
      await count('done'),
      await count('exited'),
    ]).toEqual(['3', '2', '0', '1']);
    // Another project's workflow is not listed.
    expect(await page.content()).not.toContain('Other flow');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-automations.png') });
  });

  it('draws the workflow as its steps with the runs waiting at each, and lists its runs', async () => {
    await page.click(`tr[data-workflow="${workflowId}"] a`);
    await page.waitForURL(`${base}/dashboard/automations/${workflowId}`);
    const svg = page.locator('figure.workflow-diagram svg');
    await svg.waitFor();
    const waiting = async (step: string) =>
      page.locator(`svg [data-step="${step}"]`).getAttribute('data-waiting');
    expect([
      await waiting('first-wait'),
      await waiting('nudge'),
      await waiting('wait-order'),
      await waiting('last-call'),
    ]).toEqual(['0', '0', '2', '0']);
    const end = page.locator('svg [data-step="end"]');
    expect([await end.getAttribute('data-done'), await end.getAttribute('data-exited')]).toEqual(['0', '1']);
    // Per step, the runs that entered, passed and exited it (Cy's run ended at the first wait).
    const moves = async (step: string) => {
      const box = page.locator(`svg [data-step="${step}"]`);
      return [
        await box.getAttribute('data-entered'),
        await box.getAttribute('data-passed'),
        await box.getAttribute('data-exited'),
      ];
    };
    expect({
      'first-wait': await moves('first-wait'),
      nudge: await moves('nudge'),
      'wait-order': await moves('wait-order'),
      'last-call': await moves('last-call'),
    }).toEqual({
      'first-wait': ['3', '2', '1'],
      nudge: ['2', '2', '0'],
      'wait-order': ['2', '0', '0'],
      'last-call': ['0', '0', '0'],
    });
    expect(await page.locator('svg [data-step="first-wait"]').textContent()).toContain(
      'entered 3 · passed 2 · exited 1',
    );
    // The branch that leaves the line (order placed: the end) is drawn and labelled.
    expect(await svg.textContent()).toContain('onEvent');
    expect(await svg.textContent()).toContain('wait for order.placed up to 24h');
    // The diagram is laid out: every box has a size in the page.
    const box = await page.locator('svg [data-step="wait-order"] rect').boundingBox();
    expect(box?.width).toBeGreaterThan(100);
    expect(await page.locator('tr[data-run]').count()).toBe(3);
    const exited = page.locator('tr[data-run]', { hasText: 'cy@example.test' });
    expect(await exited.textContent()).toContain('exit-event:order.placed');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-workflow.png'), fullPage: true });

    await page.selectOption('select[name=status]', 'exited');
    await page.click('form.search button[type=submit]');
    await page.waitForURL(/status=exited/);
    expect(await page.locator('tr[data-run]').count()).toBe(1);
  });

  it("shows a contact's automation timeline", async () => {
    await page.click('tr[data-run] >> text=cy@example.test');
    await page.waitForURL(/\/dashboard\/automations\?contact=cy%40example\.test/);
    const timeline = page.locator('[data-contact-timeline]');
    expect(await timeline.locator('h2').textContent()).toBe('cy@example.test');
    const kinds = await timeline
      .locator('tr[data-run-event]')
      .evaluateAll((rows) =>
        rows.map((r) => (r as unknown as { dataset: { runEvent: string } }).dataset.runEvent),
      );
    expect(kinds).toEqual(['automation.run_started', 'automation.run_exited']);
    expect(await timeline.textContent()).toContain('exit-event:order.placed');
    expect(problems).toEqual([]);
    expect(foreign).toEqual([]);
  });

  it("answers 404 for another project's workflow and escapes a contact given in the URL", async () => {
    const client = new DashboardClient(base);
    await client.signIn(secret);
    expect((await client.get(`/dashboard/automations/${foreignId}`)).status).toBe(404);
    const res = await client.get(
      `/dashboard/automations?contact=${encodeURIComponent('<script>x</script>@a.test')}`,
    );
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).not.toContain('<script>x</script>');
    expect(body).toContain('&lt;script&gt;x&lt;/script&gt;@a.test');
  });
});
