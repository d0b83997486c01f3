/**
 * One run of `topic-broadcast`, in a process of its own: `topic-run <smtp-port> <contacts> <topic|group>
 * [<http-port-file>]`. A fresh SQLite file holds `contacts` profiles in group `all`, every other one
 * subscribed to the opt-in topic `news` and also a member of group `half`. `topic` sends to group `all`
 * with `options.topic: 'news'`; `group` sends to group `half` without a topic: the same recipients. Timed
 * from `worker.start()` (the source is expanded by the worker) to the broadcast's completion. Prints one
 * JSON line.
 *
 * With BENCH_PAGE_LOAD=<requests per second> (topic mode), the engine also serves the preference centre
 * on loopback and this process GETs one contact's page at that rate while the broadcast sends, then
 * reports the pages' latencies (ms).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMailroom } from '@mailroom/core';
import { mailroomRouter } from '@mailroom/http/express';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import Database from 'better-sqlite3';
import express from 'express';
import { NEWSLETTER_MJML } from './newsletter.js';

const [portArg, contactsArg, mode] = process.argv.slice(2);
const port = Number(portArg);
const N = Number(contactsArg);
if (!port || !N || (mode !== 'topic' && mode !== 'group')) {
  throw new Error('usage: topic-run <smtp-port> <contacts> <topic|group>');
}
const PAGE_RATE = Number(process.env.BENCH_PAGE_LOAD ?? 0);

/** Writes the audience straight into the file (set-up, not measured): profiles, members, topic states. */
function seed(file: string, projectId: string, groups: { all: string; half: string }): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  const now = Date.now();
  const profile = db.prepare(
    `INSERT INTO mailroom_profiles (project_id, address, name, traits, status, labels, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'subscribed', '[]', ?, ?)`,
  );
  const member = db.prepare(
    'INSERT INTO mailroom_group_members (group_id, address, project_id, created_at) VALUES (?, ?, ?, ?)',
  );
  const state = db.prepare(
    `INSERT INTO mailroom_topic_states (project_id, address, topic_key, state, updated_at)
     VALUES (?, ?, 'news', 'subscribed', ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < N; i++) {
      const address = `r${String(i).padStart(6, '0')}@example.test`;
      profile.run(
        projectId,
        address,
        `Reader${i} Example`,
        JSON.stringify({ plan: i % 3 ? 'free' : 'pro' }),
        now,
        now,
      );
      member.run(groups.all, address, projectId, now);
      if (i % 2 === 0) {
        member.run(groups.half, address, projectId, now);
        state.run(projectId, address, now);
      }
    }
  })();
  db.close();
}

/** CPU time (microseconds) of the main thread, from /proc (its thread id is the process id); -1 without. */
function mainThreadCpuMicros(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
  } catch {
    return -1;
  }
}

interface PageFigures {
  pages: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Starts `page-load.ts` on `url`; `stop()` ends it and gives its figures (after `ms`, when given). */
function pageLoad(url: string, rate: number): { stop(): Promise<PageFigures> };
function pageLoad(url: string, rate: number, ms: number): Promise<PageFigures>;
function pageLoad(url: string, rate: number, ms?: number) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./page-load.ts', import.meta.url)), url, String(rate)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const stop = async (): Promise<PageFigures> => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.stdin.write('stop\n');
    await exited;
    return JSON.parse(out.trim()) as PageFigures;
  };
  if (ms === undefined) return { stop };
  return new Promise<void>((resolve) => setTimeout(resolve, ms)).then(stop);
}

const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-topic-'));
const file = join(dir, 'bench.db');
let baseUrl = 'http://127.0.0.1:1';
const mailroom = createMailroom({
  store: sqlStore({ url: file, sqliteCacheMiB: 16 }),
  transport: smtpTransport({ host: '127.0.0.1', port, maxConnections: 5, ignoreTLS: true }),
  // The page run keeps the engine's default worker settings (BENCH_PAGE_LOAD); the comparison the
  // delivery benchmarks' (a batch of 500, 16 sends at once).
  worker: PAGE_RATE > 0 ? {} : { batchSize: 500, concurrency: 16, flushEvery: 200, flushMs: 200 },
  unsubscribe: { baseUrl: () => baseUrl, secret: 'bench-secret-of-at-least-32-chars' },
});
try {
  const { project, secret } = await mailroom.admin.createProject({ name: 'Bench' });
  await mailroom.admin.addSender(project.id, { address: 'news@acme.test', name: 'Acme News' });
  await mailroom.admin.createTemplate(project.id, {
    ref: 'newsletter',
    format: 'mjml',
    source: NEWSLETTER_MJML,
  });
  const all = await mailroom.admin.createAudienceGroup(project.id, { ref: 'all' });
  const half = await mailroom.admin.createAudienceGroup(project.id, { ref: 'half' });
  await mailroom.topics.create(secret, { key: 'news', name: 'News', default: 'opt-in' });
  await mailroom.topics.create(secret, { key: 'offers', name: 'Offers', default: 'opt-out' });
  seed(file, project.id, { all: all.id, half: half.id });

  let server: Server | undefined;
  let pageUrl = '';
  if (PAGE_RATE > 0) {
    const app = express();
    app.use(mailroomRouter(mailroom));
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    pageUrl = await mailroom.preferencesUrl(secret, 'r000002@example.test');
  }

  const { ref } = await mailroom.broadcast(secret, {
    subject: 'Your {{ month }} update, {{ recipient.firstName }}',
    sender: 'news@acme.test',
    template: { ref: 'newsletter', variables: { month: 'March' } },
    sources: [{ ref: mode === 'topic' ? 'all' : 'half' }],
    ...(mode === 'topic' ? { options: { topic: 'news' } } : {}),
  });
  const done = new Promise<void>((resolve) => {
    mailroom.on('broadcast:completed', (event) => {
      if (event.ref === ref) resolve();
    });
  });
  // The page load runs in a process of its own; first a few seconds with no broadcast (the machine's own
  // latency), then while the broadcast sends.
  const idle = pageUrl ? await pageLoad(pageUrl, PAGE_RATE, 4000) : undefined;
  const loaded = pageUrl ? pageLoad(pageUrl, PAGE_RATE) : undefined;
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpuMicros();
  const t0 = performance.now();
  mailroom.worker.start();
  await done;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const main1 = mainThreadCpuMicros();
  const pages = loaded ? await loaded.stop() : undefined;
  await mailroom.worker.stop();
  server?.close();
  const view = await mailroom.getMailing(secret, ref);
  const expected = Math.ceil(N / 2);
  if (view.counts.sent !== expected)
    throw new Error(`counts ${JSON.stringify(view.counts)}, want ${expected} sent`);
  process.stdout.write(
    `${JSON.stringify({
      mode,
      sent: view.counts.sent,
      seconds: +seconds.toFixed(2),
      perSecond: Math.round(expected / seconds),
      cpuMicrosPerMessage: Math.round((cpu.user + cpu.system) / expected),
      mainThreadCpuMicrosPerMessage: main0 < 0 ? -1 : Math.round((main1 - main0) / expected),
      ...(pages ? { pages, idlePages: idle } : {}),
    })}\n`,
  );
} finally {
  await mailroom.close();
  rmSync(dir, { recursive: true, force: true });
}
