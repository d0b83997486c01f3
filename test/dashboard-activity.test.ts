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
import { CHROMIUM_SETUP_TIMEOUT_MS, launchChromium, watchedPage } from './support/chromium.js';
import { signInWithForm } from './support/dashboard-session.js';
import { waitUntil } from './support/wait.js';

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

/** The lines drawn on the page: series name -> values, and the chart's buckets. */
async function drawnLines(
  page: Page,
): Promise<{ bucketMs: number; buckets: number[]; drawn: Map<string, number[]> }> {
  const chart = page.locator('[data-activity]');
  await chart.waitFor();
  const bucketMs = Number(await chart.getAttribute('data-bucket-ms'));
  const buckets = ((await chart.getAttribute('data-buckets')) ?? '').split(',').map(Number);
  const drawn = new Map<string, number[]>();
  for (const line of await page.locator('polyline[data-series]').all()) {
    const name = (await line.getAttribute('data-series')) as string;
    const values = ((await line.getAttribute('data-values')) ?? '').split(',').map(Number);
    expect(values).toHaveLength(buckets.length);
    drawn.set(name, values);
  }
  return { bucketMs, buckets, drawn };
}

/** The same lines counted from the store's events (not through the chart's query), bucket by bucket. */
function expectedLines(
  events: readonly EventRecord[],
  names: Iterable<string>,
  buckets: readonly number[],
  bucketMs: number,
): Map<string, number[]> {
  const expected = new Map<string, number[]>([...names].map((k) => [k, buckets.map(() => 0)]));
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
  return expected;
}

const numbers = (value: string | null) => (value ?? '').split(',').map(Number);

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
  let pausedRef: string;
  let problems: string[];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'mailroom-activity-'));
    store = sqlStore({ url: join(dir, 'mailroom.db') });
    const transport = simulatorTransport({ reportDelayMs: 5 });
    // A warm-up on its third day (allowance 4000: nothing waits), shown with the charts.
    const start = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
    mailroom = createMailroom({
      store,
      transport,
      bounces: { domain: 'bounces.acme.test' },
      warmup: { domains: { 'acme.test': { start, initial: 1000 } } },
    });
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

    // A second broadcast, paused by an operator before any of it went, then resumed.
    pausedRef = (
      await mailroom.broadcast(secret, {
        subject: 'Summer news',
        sender: SENDER,
        message: 'Hello again',
        recipients: [
          ...Array.from({ length: 10 }, (_, i) => `later${i}@example.test`),
          `complaint+2@${SIM}`,
          `async-bounce+9@${SIM}`,
        ],
      })
    ).ref;
    await mailroom.pauseBroadcast(secret, pausedRef, { reason: 'checking the list' });
    await mailroom.worker.drain();
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await mailroom.resumeBroadcast(secret, pausedRef);
    await mailroom.worker.drain();
    await transport.settled();
    // A destination paused for half an hour, in force while the pages are read.
    await mailroom.pauseDestination(secret, 'example.test', { minutes: 30, reason: 'provider asked' });

    app = Fastify();
    await app.register(mailroomPlugin, { mailroom });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

    context = await launchChromium(join(dir, 'profile'), { viewport: { width: 1280, height: 900 } });
    ({ page, problems } = await watchedPage(context, base));
    await signInWithForm(page, base, secret, '/dashboard');
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
    const { bucketMs, buckets, drawn } = await drawnLines(page);
    expect(bucketMs).toBe(60_000);
    const events = (await allEvents(store, projectId)).filter((e) => e.mailingRef === ref);
    const expected = expectedLines(events, drawn.keys(), buckets, bucketMs);
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

  it('shades a pause on every panel where its events say, and draws the guard from the same counts', async () => {
    await page.goto(`${base}/dashboard/broadcasts/${pausedRef}`);
    const chart = page.locator('[data-activity]');
    const { bucketMs, buckets, drawn } = await drawnLines(page);
    const events = (await allEvents(store, projectId)).filter((e) => e.mailingRef === pausedRef);
    expect(Object.fromEntries(drawn)).toEqual(
      Object.fromEntries(expectedLines(events, drawn.keys(), buckets, bucketMs)),
    );
    expect((drawn.get('sent') ?? []).reduce((a, b) => a + b, 0)).toBe(12);

    // The pause: one band per panel (three and the guard's), from the paused event to the resumed one.
    const paused = events.find((e) => e.type === 'broadcast.paused');
    const resumed = events.find((e) => e.type === 'broadcast.resumed');
    expect(paused && resumed).toBeTruthy();
    const bands = page.locator(`rect[data-pause="broadcast"][data-target="${pausedRef}"]`);
    expect(await bands.count()).toBe(4);
    for (const band of await bands.all()) {
      expect(await band.getAttribute('data-from')).toBe(paused?.createdAt.toISOString());
      expect(await band.getAttribute('data-to')).toBe(resumed?.createdAt.toISOString());
      expect(await band.getAttribute('data-by')).toBe('operator');
      expect(Number(await band.getAttribute('width'))).toBeGreaterThanOrEqual(2);
    }
    // The destination paused now concerns this broadcast too: in force, to the chart's end.
    const destination = page.locator('rect[data-pause="destination"][data-target="example.test"]');
    expect(await destination.count()).toBe(4);
    expect(await destination.first().getAttribute('data-to')).toBe('');
    const list = (await page.locator('[data-pause-list]').textContent()) ?? '';
    expect(list).toContain(`broadcast ${pausedRef} paused by an operator (checking the list)`);
    expect(list).toContain('destination example.test paused by an operator (provider asked)');
    // The guard's lines: its figures are the store's counts, accumulated bucket by bucket; its limit is drawn.
    const cumulative = (values: readonly number[]) => {
      let sum = 0;
      return values.map((v) => (sum += v));
    };
    const sentOrFailed = (drawn.get('sent') ?? []).map((v, i) => v + (drawn.get('failed')?.[i] ?? 0));
    const complaints = page.locator('polyline[data-guard="broadcast.complaints"]');
    expect(numbers(await complaints.getAttribute('data-counts'))).toEqual(
      cumulative(drawn.get('complained') ?? []),
    );
    expect(numbers(await complaints.getAttribute('data-attempts'))).toEqual(cumulative(sentOrFailed));
    const hard = page.locator('polyline[data-guard="broadcast.hard-bounces"]');
    const hardCounts = numbers(await hard.getAttribute('data-counts'));
    expect(hardCounts).toEqual(cumulative(drawn.get('bounced.recipient-hard') ?? []));
    expect(hardCounts.at(-1)).toBe(1);
    // One complaint of 12: 8 % is far above 0.1 %, but fewer than 3: a third of the way to a pause.
    expect(numbers(await complaints.getAttribute('data-values')).at(-1)).toBeCloseTo(33.3, 1);
    expect(await page.locator('line[data-guard-limit="100"]').count()).toBe(1);
    // Warm-up: today's allowance of the sender's domain.
    const warmup = page.locator('[data-warmup="acme.test"]');
    expect(await warmup.getAttribute('data-day')).toBe('3');
    expect(await warmup.getAttribute('data-allowance')).toBe('4000');
    await chart.screenshot({ path: join(ARTIFACTS, 'dashboard-activity-paused.png') });
    expect(problems).toEqual([]);
  });

  it("charts one destination of the project, with that destination's pause and not another's", async () => {
    await page.goto(`${base}/dashboard/broadcasts`);
    await page.fill('#destination', 'example.test');
    await page.click('[data-destination-picker] button[type=submit]');
    await page.waitForURL(`${base}/dashboard/broadcasts?destination=example.test`);
    const chart = page.locator('[data-activity]');
    expect(await chart.getAttribute('data-destination')).toBe('example.test');
    const { bucketMs, buckets, drawn } = await drawnLines(page);
    const events = (await allEvents(store, projectId)).filter((e) => e.address?.endsWith('@example.test'));
    expect(Object.fromEntries(drawn)).toEqual(
      Object.fromEntries(expectedLines(events, drawn.keys(), buckets, bucketMs)),
    );
    expect((drawn.get('sent') ?? []).reduce((a, b) => a + b, 0)).toBe(50);
    expect(await page.locator('rect[data-pause="destination"][data-target="example.test"]').count()).toBe(4);
    // Broadcasts' pauses hold every destination back: shown here too.
    expect(await page.locator(`rect[data-pause="broadcast"][data-target="${pausedRef}"]`).count()).toBe(4);
    expect(await page.locator('polyline[data-guard="destination.sender-side"]').count()).toBe(1);
    expect(await page.locator('[data-warmup="acme.test"]').getAttribute('data-allowance')).toBe('4000');

    // Another destination: none of example.test's pause, none of its mail.
    await page.goto(`${base}/dashboard/broadcasts?destination=${SIM}`);
    const other = await drawnLines(page);
    expect((other.drawn.get('sent') ?? []).reduce((a, b) => a + b, 0)).toBe(9);
    expect(await page.locator('rect[data-pause="destination"]').count()).toBe(0);
    await page
      .locator('[data-activity]')
      .screenshot({ path: join(ARTIFACTS, 'dashboard-activity-destination.png') });
    expect(problems).toEqual([]);
  });
});

/** Polls `check` until it holds, or fails after `ms`. */

describe("a guard's pause in a browser", () => {
  let dir: string;
  let store: Store;
  let mailroom: Mailroom;
  let app: FastifyInstance;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let projectId: string;
  let ref: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-activity-guard-'));
    store = sqlStore({ url: join(dir, 'mailroom.db') });
    const transport = simulatorTransport({ reportDelayMs: 5 });
    mailroom = createMailroom({
      store,
      transport,
      bounces: { domain: 'bounces.acme.test' },
      // Slow enough that the guard (small rule, checked often) sees the refusals while it sends.
      worker: { ratePerSecond: 20, batchSize: 5, concurrency: 1, pollMs: 20 },
      guard: {
        checkMs: 400,
        broadcast: { senderSideRate: 0.1, senderSideMin: 3 },
        destination: { senderSideMin: 1_000_000 },
      },
    });
    transport.connect(mailroom);
    const acme = await mailroom.admin.createProject({ name: 'Acme' });
    projectId = acme.project.id;
    await mailroom.admin.addSender(projectId, { address: SENDER });
    ref = (
      await mailroom.broadcast(acme.secret, {
        subject: 'Autumn news',
        sender: SENDER,
        message: 'Hello',
        recipients: [
          // DMARC rejections told by DSN after acceptance: sender-side bounces the guard counts, each once
          // (a refusal at send time, `dmarc@`, would be held and sent again after the resume).
          ...[1, 2, 3, 4].map((i) => `async-dmarc+${i}@${SIM}`),
          ...Array.from({ length: 30 }, (_, i) => `reader${i}@example.test`),
        ],
      })
    ).ref;
    mailroom.worker.start();
    await waitUntil(async () => (await mailroom.listPauses(acme.secret)).length > 0, 20_000);
    // Resumed before the guard's next round: the guard knows the pause it wrote, so it judges afresh
    // from the resume rather than pausing again on the same figures.
    await mailroom.resumeBroadcast(acme.secret, ref);
    await waitUntil(async () => (await mailroom.getMailing(acme.secret, ref)).status === 'completed', 30_000);

    app = Fastify();
    await app.register(mailroomPlugin, { mailroom });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    context = await launchChromium(join(dir, 'profile'), { viewport: { width: 1280, height: 900 } });
    ({ page } = await watchedPage(context, base));
    await signInWithForm(page, base, acme.secret, '/dashboard');
  }, CHROMIUM_SETUP_TIMEOUT_MS + 50_000);

  afterAll(async () => {
    await context?.close();
    await app?.close();
    await mailroom?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shades the pause with its rule, and counts the rule afresh from the resume', async () => {
    await page.goto(`${base}/dashboard/broadcasts/${ref}`);
    const { bucketMs, buckets, drawn } = await drawnLines(page);
    const events = (await allEvents(store, projectId)).filter((e) => e.mailingRef === ref);
    expect(Object.fromEntries(drawn)).toEqual(
      Object.fromEntries(expectedLines(events, drawn.keys(), buckets, bucketMs)),
    );
    const paused = events.find((e) => e.type === 'broadcast.paused');
    const resumed = events.find((e) => e.type === 'broadcast.resumed');
    expect(paused?.data.pause).toMatchObject({ by: 'guard', rule: { name: 'broadcast.sender-side' } });
    const bands = page.locator(
      'rect[data-pause="broadcast"][data-by="guard"][data-rule="broadcast.sender-side"]',
    );
    expect(await bands.count()).toBe(4);
    expect(await bands.first().getAttribute('data-from')).toBe(paused?.createdAt.toISOString());
    expect(await bands.first().getAttribute('data-to')).toBe(resumed?.createdAt.toISOString());
    const rule = paused?.data.pause?.rule;
    const list = (await page.locator('[data-pause-list]').textContent()) ?? '';
    expect(list).toContain(
      `broadcast ${ref} paused by the guard (broadcast.sender-side: ${rule?.count} of ${rule?.attempts}, above 10 %)`,
    );

    // The rule's figures: the store's refusals and attempts, summed from the start and again from the
    // resume's bucket (as the guard judges a resumed broadcast afresh).
    const resumeBucket = buckets.indexOf(
      (resumed?.createdAt.getTime() ?? 0) - ((resumed?.createdAt.getTime() ?? 0) % bucketMs),
    );
    expect(resumeBucket).toBeGreaterThanOrEqual(0);
    const running = (values: readonly number[]) => {
      let sum = 0;
      return values.map((v, i) => (sum = (i === resumeBucket ? 0 : sum) + v));
    };
    const line = page.locator('polyline[data-guard="broadcast.sender-side"]');
    expect(numbers(await line.getAttribute('data-counts'))).toEqual(
      running(drawn.get('bounced.sender-side') ?? []),
    );
    expect(numbers(await line.getAttribute('data-attempts'))).toEqual(
      running((drawn.get('sent') ?? []).map((v, i) => v + (drawn.get('failed')?.[i] ?? 0))),
    );
    expect((drawn.get('bounced.sender-side') ?? []).reduce((a, b) => a + b, 0)).toBe(4);
    await page
      .locator('[data-activity]')
      .screenshot({ path: join(ARTIFACTS, 'dashboard-activity-guard.png') });
  });
});
