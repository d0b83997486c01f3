/**
 * Issue 36: one project never slows another.
 *
 * Phase `fair`: project A's broadcast of BENCH_RECIPIENTS (100,000) recipients (the newsletter MJML,
 * accepted 250 per call into a SQLite file) delivered by one in-process worker to an SMTP sink in its own
 * process; in the paired run project B sends BENCH_SINGLES (100) single messages, one every 50 ms, once
 * A's delivery is under way. B's delay is from its `send` answer until the engine's `delivery` event
 * (`sent`: after the sink's 250, so an upper bound of the time to the sink). A's rate (its messages over
 * its delivery time) is compared with A's rate alone, the two runs alternating within each round.
 * Targets: B's p99 under 5 s; A's rate within 10 % of alone.
 *
 * Phase `preview`: `mailroom serve` (built CLI, SQLite, in-process worker, SMTP to the sink): project B
 * sends BENCH_SENDS (200) single messages one after the other over HTTP, first alone, then while 8 clients
 * of project A loop on `POST /templates/spin/preview` of a template whose nested loops run into the
 * 1 s render limit (429s included: a client that ignores Retry-After). Reported: B's request p50/p99 and
 * the slowest time from request to the sink's count. Targets: p99 under 50 ms, mail within 1 s.
 *
 * Environment: BENCH_PHASES (`fair,preview`), BENCH_RUNS (3), BENCH_RECIPIENTS, BENCH_SINGLES, BENCH_SENDS,
 * BENCH_B_BROADCAST (`1`: B sends one broadcast of BENCH_SINGLES recipients, not single messages).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { startCli } from './support/cli-process.js';
import { median, report } from './support/measure.js';
import { NEWSLETTER_MJML, newsletterVariables } from './support/newsletter.js';
import { type SinkProcess, startSinkProcess } from './support/sink-process.js';

const PHASES = (process.env.BENCH_PHASES ?? 'fair,preview').split(',');
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const N = Number(process.env.BENCH_RECIPIENTS ?? 100_000);
const SINGLES = Number(process.env.BENCH_SINGLES ?? 100);
const SENDS = Number(process.env.BENCH_SENDS ?? 200);
/** `1`: B sends one broadcast of BENCH_SINGLES recipients instead of single messages (fair claims). */
const B_BROADCAST = process.env.BENCH_B_BROADCAST === '1';
const SPIN = '<p>{% for a in (1..3000) %}{% for b in (1..3000) %}{% endfor %}{% endfor %}</p>';

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (n: number) => Math.round(n * 10) / 10;

interface FairRun {
  aPerSecond: number;
  bP50Ms?: number;
  bP99Ms?: number;
  bMaxMs?: number;
}

/** A's broadcast, with B's single sends beside it when `withB`. */
async function fairRun(sink: SinkProcess, withB: boolean): Promise<FairRun> {
  await sink.reset();
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-fair-'));
  const mailroom = createMailroom({
    store: sqlStore({ url: join(dir, 'bench.db'), sqliteCacheMiB: 16 }),
    transport: smtpTransport({ host: '127.0.0.1', port: sink.port, maxConnections: 5, ignoreTLS: true }),
    worker: { renderThreads: 0, batchSize: 500, concurrency: 16, flushEvery: 200, flushMs: 200 },
  });
  try {
    const a = await mailroom.admin.createProject({ name: 'A' });
    const b = await mailroom.admin.createProject({ name: 'B' });
    await mailroom.admin.addSender(a.project.id, { address: 'news@a.test', name: 'A News' });
    await mailroom.admin.addSender(b.project.id, { address: 'reset@b.test', name: 'B' });
    await mailroom.admin.createTemplate(a.project.id, {
      ref: 'newsletter',
      format: 'mjml',
      subject: 'Your {{ month }} update, {{ recipient.firstName }}',
      source: NEWSLETTER_MJML,
    });
    let ref: string | undefined;
    for (let i = 0; i < N; i += 250) {
      const recipients = Array.from({ length: Math.min(250, N - i) }, (_, j) => ({
        address: `r${i + j}@example.test`,
        name: `Reader${i + j} Example`,
        variables: newsletterVariables(i + j),
      }));
      if (ref === undefined) {
        ({ ref } = await mailroom.broadcast(a.secret, {
          subject: 'Your {{ month }} update, {{ recipient.firstName }}',
          sender: 'news@a.test',
          template: { ref: 'newsletter', variables: { month: 'March' } },
          recipients,
        }));
      } else {
        await mailroom.broadcast(a.secret, { broadcastRef: ref, recipients });
      }
    }
    const accepted = new Map<string, number>();
    const delays: number[] = [];
    let aSent = 0;
    let aLast = 0;
    mailroom.on('delivery', (event) => {
      if (event.status !== 'sent') return;
      if (event.projectId === a.project.id) {
        aSent++;
        aLast = performance.now();
        return;
      }
      const at = accepted.get(event.address);
      if (at !== undefined) delays.push(performance.now() - at);
    });
    const done = new Promise<void>((resolve) => {
      mailroom.on('broadcast:completed', (event) => {
        if (event.ref === ref) resolve();
      });
    });
    const t0 = performance.now();
    mailroom.worker.start();
    if (withB) {
      // Once A's delivery is under way (a tenth sent), B's password resets, one every 50 ms.
      while (aSent < N / 10) await sleep(20);
      if (B_BROADCAST) {
        // B's broadcast, accepted while A's backlog waits: served by the claims' share per project.
        const recipients = Array.from({ length: SINGLES }, (_, i) => ({
          address: `user${i}@b.example.test`,
          name: 'User',
        }));
        await mailroom.broadcast(b.secret, {
          subject: 'B news',
          sender: 'reset@b.test',
          message: '<p>Hello {{ name }}</p>',
          recipients,
        });
        const at = performance.now();
        for (const r of recipients) accepted.set(r.address, at);
      }
      for (let i = 0; i < (B_BROADCAST ? 0 : SINGLES); i++) {
        const address = `user${i}@b.example.test`;
        await mailroom.send(b.secret, {
          subject: 'Your reset code',
          sender: 'reset@b.test',
          message: '<p>Your code is {{ code }}</p>',
          variables: { code: String(100_000 + i) },
          recipients: [{ address, name: 'User' }],
        });
        accepted.set(address, performance.now());
        await sleep(50);
      }
    }
    await done;
    while (withB && delays.length < SINGLES) await sleep(20);
    await mailroom.worker.stop();
    const seconds = (aLast - t0) / 1000;
    return {
      aPerSecond: Math.round(N / seconds),
      ...(withB
        ? {
            bP50Ms: round(percentile(delays, 50)),
            bP99Ms: round(percentile(delays, 99)),
            bMaxMs: round(Math.max(...delays)),
          }
        : {}),
    };
  } finally {
    await mailroom.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface PreviewRun {
  aloneP50Ms: number;
  aloneP99Ms: number;
  aloneMailMaxMs: number;
  duringP50Ms: number;
  duringP99Ms: number;
  duringMailMaxMs: number;
  previewStatuses: Record<string, number>;
}

async function call(url: string, secret: string, path: string, body: unknown): Promise<number> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.status;
}

/** `mailroom serve` with two projects: B's sends alone, then beside A's 8 spinning previewers. */
async function previewRun(sink: SinkProcess): Promise<PreviewRun> {
  await sink.reset();
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-preview-'));
  const db = join(dir, 'bench.db');
  const seed = createMailroom({ store: sqlStore({ url: db }), transport: memoryTransport() });
  const a = await seed.admin.createProject({ name: 'A' });
  const b = await seed.admin.createProject({ name: 'B' });
  await seed.admin.addSender(b.project.id, { address: 'reset@b.test', name: 'B' });
  await seed.admin.createTemplate(a.project.id, { ref: 'spin', format: 'html', subject: 'x', source: SPIN });
  await seed.close();
  const serve = await startCli([
    'serve',
    '--port',
    '0',
    '--database',
    db,
    '--smtp',
    `smtp://127.0.0.1:${sink.port}`,
  ]);
  try {
    let delivered = 0;
    const measure = async () => {
      const latencies: number[] = [];
      let mailMax = 0;
      for (let i = 0; i < SENDS; i++) {
        const started = performance.now();
        const status = await call(serve.url, b.secret, '/send/mail', {
          subject: 'Your reset code',
          sender: 'reset@b.test',
          message: '<p>Your code is {{ code }}</p>',
          variables: { code: String(i) },
          recipients: [{ address: `user${i}@b.example.test`, name: 'User' }],
        });
        latencies.push(performance.now() - started);
        if (status !== 200) throw new Error(`send answered ${status}`);
        delivered++;
        while ((await sink.count()) < delivered) await sleep(2);
        mailMax = Math.max(mailMax, performance.now() - started);
      }
      return {
        p50: round(percentile(latencies, 50)),
        p99: round(percentile(latencies, 99)),
        mailMax: round(mailMax),
      };
    };
    // Warm-up: the SMTP pool, the render thread and the JIT.
    await measure();
    const alone = await measure();
    const statuses: Record<string, number> = {};
    let previewing = true;
    const previewers = Array.from({ length: 8 }, async () => {
      while (previewing) {
        const status = await call(serve.url, a.secret, '/templates/spin/preview', {});
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status === 429) await sleep(20);
      }
    });
    await sleep(1_500);
    let during: Awaited<ReturnType<typeof measure>>;
    try {
      during = await measure();
    } finally {
      previewing = false;
      await Promise.all(previewers);
    }
    return {
      aloneP50Ms: alone.p50,
      aloneP99Ms: alone.p99,
      aloneMailMaxMs: alone.mailMax,
      duringP50Ms: during.p50,
      duringP99Ms: during.p99,
      duringMailMaxMs: during.mailMax,
      previewStatuses: statuses,
    };
  } finally {
    await serve.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const sink = await startSinkProcess();
try {
  if (PHASES.includes('fair')) {
    const alone: FairRun[] = [];
    const withB: FairRun[] = [];
    for (let run = 0; run < RUNS; run++) {
      // Alternate the order between rounds so that a drift of the machine's load favours neither.
      if (run % 2 === 0) {
        alone.push(await fairRun(sink, false));
        withB.push(await fairRun(sink, true));
      } else {
        withB.push(await fairRun(sink, true));
        alone.push(await fairRun(sink, false));
      }
      console.error(
        `fair round ${run + 1}: alone ${JSON.stringify(alone.at(-1))}, with B ${JSON.stringify(withB.at(-1))}`,
      );
    }
    const ratios = alone.map((x, i) => (withB[i]?.aPerSecond ?? 0) / x.aPerSecond);
    report('project-isolation/fair', {
      recipients: N,
      singles: SINGLES,
      runs: RUNS,
      aAlonePerSecond: median(alone.map((r) => r.aPerSecond)),
      aWithBPerSecond: median(withB.map((r) => r.aPerSecond)),
      aRateRatio: +median(ratios).toFixed(3),
      bDelayP50Ms: median(withB.map((r) => r.bP50Ms ?? 0)),
      bDelayP99Ms: median(withB.map((r) => r.bP99Ms ?? 0)),
      bDelayMaxMs: Math.max(...withB.map((r) => r.bMaxMs ?? 0)),
      rounds: { alone, withB },
    });
  }
  if (PHASES.includes('preview')) {
    const runs: PreviewRun[] = [];
    for (let run = 0; run < RUNS; run++) {
      runs.push(await previewRun(sink));
      console.error(`preview round ${run + 1}: ${JSON.stringify(runs.at(-1))}`);
    }
    const med = (key: keyof Omit<PreviewRun, 'previewStatuses'>) => median(runs.map((r) => r[key]));
    report('project-isolation/preview', {
      sends: SENDS,
      runs: RUNS,
      aloneP50Ms: med('aloneP50Ms'),
      aloneP99Ms: med('aloneP99Ms'),
      duringP50Ms: med('duringP50Ms'),
      duringP99Ms: med('duringP99Ms'),
      aloneMailMaxMs: med('aloneMailMaxMs'),
      duringMailMaxMs: med('duringMailMaxMs'),
      rounds: runs,
    });
  }
} finally {
  await sink.close();
}
