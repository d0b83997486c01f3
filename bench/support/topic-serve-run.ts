/**
 * The preference page and an API read while a topic broadcast sends, on `mailroom serve` as users run it
 * (the built CLI, its default flags but the database and the relay): a fresh SQLite file seeded with the
 * `topic-broadcast` audience (`topic-seed.ts`), the broadcast posted over HTTP (`sources: [{ ref: 'all' }]`,
 * `options.topic: 'news'`), and while it sends, two client processes of their own GET, `rate` times a second
 * each, one contact's preference page and `GET /audience/profiles/:email/topics` (an API route with the
 * project's key). First `IDLE_MS` of the same load before the broadcast (what the machine alone gives).
 * The server's event-loop delay is read by `loop-delay.cjs`, preloaded into it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { startCli } from './cli-process.js';
import { NEWSLETTER_MJML } from './newsletter.js';
import { type PageFigures, pageLoadFor, startPageLoad } from './page-load-process.js';
import { untilSinkHas } from './serve-run.js';
import type { SinkProcess } from './sink-process.js';
import { seededAddress, seedTopicAudience } from './topic-seed.js';

const LOOP_DELAY = fileURLToPath(new URL('./loop-delay.cjs', import.meta.url));
const IDLE_MS = 4000;
const SENDER = 'news@acme.test';

/** The server's event-loop delay while the broadcast sent (`loop-delay.cjs`), in milliseconds. */
export interface LoopDelay {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
  stallsOver20Ms: number;
  stallsOver50Ms: number;
}

/** What one serve run measured. */
export interface ServeTopicResult {
  /** Which tree's CLI ran: this one (`head`) or the baseline's (`base`, BENCH_BASE_BIN). */
  tree: 'head' | 'base';
  perSecond: number;
  seconds: number;
  /** CPU of the serve process (every thread) per message, microseconds. */
  cpuMicrosPerMessage: number;
  page: PageFigures;
  api: PageFigures;
  idlePage: PageFigures;
  idleApi: PageFigures;
  loop: LoopDelay;
}

/** The project, sender, template, groups, topics and audience; returns the key and a preference link's path. */
async function seed(file: string, contacts: number): Promise<{ secret: string; pagePath: string }> {
  const mailroom = createMailroom({
    store: sqlStore({ url: file }),
    transport: memoryTransport(),
    // The unsubscribe secret is generated here and kept in the database: serve signs with the same one.
    unsubscribe: { baseUrl: 'http://127.0.0.1:1' },
  });
  try {
    const { project, secret } = await mailroom.admin.createProject({ name: 'Bench' });
    await mailroom.admin.addSender(project.id, { address: SENDER, name: 'Acme News' });
    await mailroom.admin.createTemplate(project.id, {
      ref: 'newsletter',
      format: 'mjml',
      source: NEWSLETTER_MJML,
    });
    const all = await mailroom.admin.createAudienceGroup(project.id, { ref: 'all' });
    const half = await mailroom.admin.createAudienceGroup(project.id, { ref: 'half' });
    await mailroom.topics.create(secret, { key: 'news', name: 'News', default: 'opt-in' });
    await mailroom.topics.create(secret, { key: 'offers', name: 'Offers', default: 'opt-out' });
    seedTopicAudience(file, project.id, { all: all.id, half: half.id }, contacts);
    const url = new URL(await mailroom.preferencesUrl(secret, seededAddress(2)));
    return { secret, pagePath: url.pathname };
  } finally {
    await mailroom.close();
  }
}

/** One run (see the file's comment); `bin`: another tree's built CLI instead of this one's. */
export async function serveTopicRun(
  sink: SinkProcess,
  contacts: number,
  rate: number,
  bin?: string,
): Promise<ServeTopicResult> {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-topic-serve-'));
  const file = join(dir, 'mailroom.db');
  const loopFile = join(dir, 'loop.json');
  const expected = Math.ceil(contacts / 2);
  try {
    const { secret, pagePath } = await seed(file, contacts);
    const serve = await startCli(
      ['serve', '--port', '0', '--database', file, '--smtp', `smtp://127.0.0.1:${sink.port}`],
      {
        nodeArgs: ['--require', LOOP_DELAY],
        env: { BENCH_LOOP_DELAY_FILE: loopFile },
        ...(bin ? { bin } : {}),
      },
    );
    try {
      await sink.reset();
      const pageUrl = `${serve.url}${pagePath}`;
      const apiUrl = `${serve.url}/audience/profiles/${encodeURIComponent(seededAddress(4))}/topics`;
      const auth = `Bearer ${secret}`;
      const [idlePage, idleApi] = await Promise.all([
        pageLoadFor(pageUrl, rate, IDLE_MS),
        pageLoadFor(apiUrl, rate, IDLE_MS, auth),
      ]);
      const page = startPageLoad(pageUrl, rate);
      const api = startPageLoad(apiUrl, rate, auth);
      serve.child.kill('SIGUSR2');
      const cpu0 = serve.cpuMicros();
      const t0 = performance.now();
      const response = await fetch(`${serve.url}/send/mail/broadcast`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({
          subject: 'Your {{ month }} update, {{ recipient.firstName }}',
          sender: SENDER,
          template: { ref: 'newsletter', variables: { month: 'March' } },
          sources: [{ ref: 'all' }],
          options: { topic: 'news' },
        }),
      });
      if (!response.ok) throw new Error(`broadcast: ${response.status} ${await response.text()}`);
      await untilSinkHas(sink, expected);
      const seconds = (performance.now() - t0) / 1000;
      const cpu = serve.cpuMicros() - cpu0;
      // The loop file is rewritten every 250 ms: wait for one written after the end.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const loop = JSON.parse(readFileSync(loopFile, 'utf8')) as LoopDelay;
      const [pageFigures, apiFigures] = await Promise.all([page.stop(), api.stop()]);
      return {
        tree: bin ? 'base' : 'head',
        perSecond: Math.round(expected / seconds),
        seconds: +seconds.toFixed(2),
        cpuMicrosPerMessage: Math.round(cpu / expected),
        page: pageFigures,
        api: apiFigures,
        idlePage,
        idleApi,
        loop,
      };
    } finally {
      await serve.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
