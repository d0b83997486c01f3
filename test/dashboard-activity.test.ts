import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ActivitySeriesName, EventRecord, Mailroom, Store } from '@mailroom/core';
import { createMailroom } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { simulatorTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import Fastify, { type FastifyInstance } from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_SETUP_TIMEOUT_MS, launchChromium } from './support/chromium.js';

/**
 * The activity charts in a real headless Chromium, on a real SQLite store: a broadcast to good addresses
 * and to the simulator's bouncing, refusing and complaining ones, its DSNs and complaints mailed back and
 * read. The page's lines must hold exactly the counts of the store's events, counted here from
 * `listEvents` (not through the chart's own query), bucket by bucket; the completion is marked; the
 * points are drawn where their values say; no Content-Security-Policy violation.
 */

const ARTIFACTS = fileURLToPath(new URL('./.artifacts/', import.meta.url));
const SENDER = 'news@acme.test';
const SIM = 'simulator.mailroom.test';

/** The series an event counts in (the chart's rule, written out again independently). */
function seriesOf(event: EventRecord): ActivitySeriesName | undefined {
  switch (event.type) {
    case 'email.sent':
      return 'sent';
    case 'email.delivery_delayed':
      return 'deferred';
    case 'email.failed':
      return 'failed';
    case 'email.complained':
      return 'complained';
    case 'email.suppressed':
      return 'suppressed';
    case 'email.bounced':
      return `bounced.${event.data.bounce?.class ?? 'soft'}` as ActivitySeriesName;
    case 'email.opened':
      return event.data.machine ? 'opened.machine' : 'opened.human';
    case 'email.clicked':
      return event.data.machine ? 'clicked.machine' : 'clicked.human';
    default:
      return undefined;
  }
}

async function allEvents(store: Store, projectId: string): Promise<EventRecord[]> {
  const out: EventRecord[] = [];
  for (;;) {
    const page = await store.listEvents(projectId, {}, { after: out.at(-1)?.id ?? null, limit: 500 });
    out.push(...page);
    if (page.length < 500) return out;
  }
}

describe('activity charts in a browser', () => {
  let dir: string;
  let store: Store;
  let mailroom: Mailroom;
  let app: FastifyInstance;
  let base: string;
  let context: BrowserContext;
  let page: Page;
  let projectId: string;
  let secret: string;
  let ref: string;
  const problems: string[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'mailroom-activity-'));
    store = sqlStore({ url: join(dir, 'mailroom.db') });
    const transport = simulatorTransport({ reportDelayMs: 5 });
    mailroom = createMailroom({ store, transport, bounces: { domain: 'bounces.acme.test' } });
    transport.connect(mailroom);
    const acme = await mailroom.admin.createProject({ name: 'Acme' });
    projectId = acme.project.id;
    secret = acme.secret;
    await mailroom.admin.addSender(projectId, { address: SENDER, name: 'Acme News' });
    const recipients = [
      ...Array.from({ length: 40 }, (_, i) => `reader${i}@example.test`),
      ...[1, 2, 3].map((i) => `async-bounce+${i}@${SIM}`),
      ...[1, 2].map((i) => `async-dmarc+${i}@${SIM}`),
      `complaint+1@${SIM}`,
      `soft+1@${SIM}`,
    ];
    ref = (
      await mailroom.broadcast(secret, {
        subject: 'Spring news',
        sender: SENDER,
        message: 'Hello',
        recipients,
      })
    ).ref;
    await mailroom.worker.drain();
    await transport.settled();

    app = Fastify();
    await app.register(mailroomPlugin, { mailroom });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

    context = await launchChromium(join(dir, 'profile'), { viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(10_000);
    page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`${base}/dashboard`);
    await page.fill('#secret', secret);
    await page.click('button[type=submit]');
    await page.waitForURL(`${base}/dashboard/broadcasts`);
  }, CHROMIUM_SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await context?.close();
    await app?.close();
    await mailroom?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("draws a broadcast's events exactly as the store holds them, bucket by bucket", async () => {
    await page.goto(`${base}/dashboard/broadcasts/${ref}`);
    const chart = page.locator('[data-activity]');
    await chart.waitFor();
    const bucketMs = Number(await chart.getAttribute('data-bucket-ms'));
    const buckets = ((await chart.getAttribute('data-buckets')) ?? '').split(',').map(Number);
    expect(bucketMs).toBe(60_000);

    const drawn = new Map<string, number[]>();
    for (const line of await page.locator('polyline[data-series]').all()) {
      const name = (await line.getAttribute('data-series')) as string;
      const values = ((await line.getAttribute('data-values')) ?? '').split(',').map(Number);
      expect(values).toHaveLength(buckets.length);
      drawn.set(name, values);
    }

    const expected = new Map<string, number[]>([...drawn.keys()].map((k) => [k, buckets.map(() => 0)]));
    const events = (await allEvents(store, projectId)).filter((e) => e.mailingRef === ref);
    for (const event of events) {
      const name = seriesOf(event);
      if (!name) continue;
      const index = buckets.indexOf(event.createdAt.getTime() - (event.createdAt.getTime() % bucketMs));
      expect(
        index,
        `${event.type} at ${event.createdAt.toISOString()} is inside the chart`,
      ).toBeGreaterThanOrEqual(0);
      const counts = expected.get(name) as number[];
      counts[index] = (counts[index] ?? 0) + 1;
    }
    expect(Object.fromEntries(drawn)).toEqual(Object.fromEntries(expected));
    // The mail itself: 45 accepted by the simulator (the DMARC refusals bounce later), and each class seen.
    const sum = (name: string) => (drawn.get(name) ?? []).reduce((a, b) => a + b, 0);
    expect(sum('bounced.recipient-hard')).toBe(3);
    expect(sum('bounced.sender-side')).toBe(2);
    expect(sum('complained')).toBe(1);
    expect(sum('sent')).toBeGreaterThanOrEqual(40);

    // The points sit where their values say: a zero on the axis, the largest at the top of its panel.
    const sent = page.locator('polyline[data-series="sent"]');
    const points = ((await sent.getAttribute('points')) ?? '').split(' ').map((p) => Number(p.split(',')[1]));
    const values = drawn.get('sent') as number[];
    const top = Math.min(...points);
    values.forEach((v, i) => {
      if (v === 0) expect(points[i]).toBe(120);
      if (v === Math.max(...values)) expect(points[i]).toBe(top);
    });

    // The broadcast's completion is marked on the time axis.
    const completed = events.find((e) => e.type === 'broadcast.completed');
    expect(completed).toBeDefined();
    expect(await page.locator('line[data-marker="broadcast.completed"]').count()).toBe(3);
    await chart.screenshot({ path: join(ARTIFACTS, 'dashboard-activity-broadcast.png') });
    expect(problems).toEqual([]);
  });

  it("shows the project's last 24 hours on the broadcasts page, and another project's ref is not charted", async () => {
    await page.goto(`${base}/dashboard/broadcasts`);
    const chart = page.locator('[data-activity]');
    await chart.waitFor();
    expect(Number(await chart.getAttribute('data-bucket-ms'))).toBe(3_600_000);
    const sent = (
      (await page.locator('polyline[data-series="sent"]').first().getAttribute('data-values')) ?? ''
    )
      .split(',')
      .map(Number);
    expect(sent.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(40);
    const other = await mailroom.admin.createProject({ name: 'Other' });
    await expect(mailroom.activity(other.secret, { mailingRef: ref })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(problems).toEqual([]);
  });
});
