/**
 * One Mailroom run of `delivery-broadcast`, in a process of its own so that its peak RSS is its own:
 * `delivery-run <smtp-port> <recipients> <render-threads> <batch-size> [<webhook-port>]`. Accepts the
 * broadcast into a fresh SQLite file, delivers it, and prints one JSON line with the figures. With a
 * webhook port, the project has one endpoint subscribed to `email.sent` at 127.0.0.1:<webhook-port>
 * (allow-listed), and the run also reports when the last event was delivered to it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { NEWSLETTER_MJML, newsletterVariables } from './newsletter.js';

const [port, recipients, threads, batch, webhookPort] = process.argv.slice(2).map(Number);
if (!port || !recipients || threads === undefined || !batch) {
  throw new Error('usage: delivery-run <smtp-port> <recipients> <render-threads> <batch-size>');
}
const N = recipients;
const THREADS = threads;
const BATCH = batch;
/**
 * The store's SQLite page cache in MiB: 16 as in the CSV benchmark, for a process held under a memory
 * budget (the store's default is 64, which this run fills: about 40 MiB more peak RSS, the same rate).
 */
const SQLITE_CACHE_MIB = Number(process.env.BENCH_SQLITE_CACHE_MIB ?? 16);
/** BENCH_TRACKING=1: opens and clicks tracked (the `delivery-tracking` benchmark). */
const TRACKING = process.env.BENCH_TRACKING === '1';
/**
 * BENCH_LOCAL_TIME=1: the broadcast sends at 09:00 in each recipient's zone (six zones, one a bad name that
 * falls back to UTC); BENCH_SHIFTED_CLOCK=1 (implied by it): the run accepts two days in the past on a clock
 * that then jumps to now, so every local 09:00 is due when the worker starts and its time excludes the wait.
 * The `local-time` benchmark runs both ways with the shifted clock, so the two differ only in the plan.
 */
const LOCAL_TIME = process.env.BENCH_LOCAL_TIME === '1';
const SHIFTED_CLOCK = LOCAL_TIME || process.env.BENCH_SHIFTED_CLOCK === '1';
const ZONES = [
  'America/New_York',
  'Europe/Berlin',
  'Asia/Tokyo',
  'Australia/Sydney',
  'America/Sao_Paulo',
  'Mars/Base',
];
let clockOffsetMs = SHIFTED_CLOCK ? -2 * 86_400_000 : 0;

// BENCH_MEMORY_TRACE=1: where the peak RSS goes (the sample with the highest RSS, to stderr).
let phase: 'accept' | 'deliver' = 'accept';
let peakSample: (NodeJS.MemoryUsage & { phase: string }) | undefined;

interface RunResult {
  acceptSeconds: number;
  deliverSeconds: number;
  perSecond: number;
  /** CPU time of the whole process (every thread) per message while delivering, in microseconds. */
  cpuMicrosPerMessage: number;
  /** Share of the delivery time the main thread's event loop was busy (0-1). */
  mainThreadBusy: number;
  /** CPU time of the main thread alone per message while delivering (microseconds; Linux only, else -1). */
  mainThreadCpuMicrosPerMessage: number;
  /** With a webhook endpoint: seconds from `worker.start()` until every event was delivered to it. */
  webhookSeconds?: number;
}

/**
 * CPU time (microseconds) the main thread has used, from /proc (its thread id is the process id); -1 where
 * there is no /proc. Unlike the event loop's busy share, it does not count time the machine's other load
 * kept the thread waiting for a core.
 */
function mainThreadCpuMicros(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    // Clock ticks of 1/100 s (USER_HZ on Linux).
    return (ticks * 1e6) / 100;
  } catch {
    return -1;
  }
}

async function mailroomRun(): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-delivery-'));
  const transport = smtpTransport({ host: '127.0.0.1', port, maxConnections: 5, ignoreTLS: true });
  const mailroom = createMailroom({
    store: sqlStore({ url: join(dir, 'bench.db'), sqliteCacheMiB: SQLITE_CACHE_MIB }),
    transport,
    worker: { renderThreads: THREADS, batchSize: BATCH, concurrency: 16, flushEvery: 200, flushMs: 200 },
    // BENCH_BOUNCE_DOMAIN: every message with a VERP return path (an HMAC per delivery).
    ...(process.env.BENCH_BOUNCE_DOMAIN ? { bounces: { domain: process.env.BENCH_BOUNCE_DOMAIN } } : {}),
    ...(webhookPort ? { fetch: { allowHosts: [`127.0.0.1:${webhookPort}`] } } : {}),
    // BENCH_WEBHOOK_BUSY_RATE: the sender's cap while deliveries are in flight (the engine's default if unset).
    ...(process.env.BENCH_WEBHOOK_BUSY_RATE
      ? { webhooks: { busyRatePerSecond: Number(process.env.BENCH_WEBHOOK_BUSY_RATE) } }
      : {}),
    ...(SHIFTED_CLOCK ? { clock: { now: () => new Date(Date.now() + clockOffsetMs) } } : {}),
    ...(TRACKING ? { tracking: { baseUrl: 'https://mail.acme.test', opens: true, clicks: true } } : {}),
    // BENCH_GUARD=0: the reputation guard off (its cost: alternate with the default, on).
    ...(process.env.BENCH_GUARD === '0' ? { guard: false as const } : {}),
  });
  try {
    const { project, secret } = await mailroom.admin.createProject({ name: 'Bench' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test', name: 'Acme News' });
    if (webhookPort) {
      await mailroom.webhooks.add(secret, {
        url: `http://127.0.0.1:${webhookPort}/hook`,
        events: ['email.sent'],
      });
    }
    await mailroom.admin.createTemplate(project.id, {
      ref: 'newsletter',
      format: 'mjml',
      subject: 'Your {{ month }} update, {{ recipient.firstName }}',
      source: NEWSLETTER_MJML,
    });
    const t0 = performance.now();
    let ref: string | undefined;
    for (let i = 0; i < N; i += 250) {
      const recipients = Array.from({ length: Math.min(250, N - i) }, (_, j) => ({
        address: `r${i + j}@example.test`,
        name: `Reader${i + j} Example`,
        variables: SHIFTED_CLOCK
          ? { ...newsletterVariables(i + j), tz: ZONES[(i + j) % ZONES.length] as string }
          : newsletterVariables(i + j),
      }));
      if (ref === undefined) {
        ({ ref } = await mailroom.broadcast(secret, {
          subject: 'Your {{ month }} update, {{ recipient.firstName }}',
          sender: 'news@acme.test',
          template: { ref: 'newsletter', variables: { month: 'March' } },
          recipients,
          ...(LOCAL_TIME ? { options: { localTime: { at: '09:00', timezone: 'tz', fallback: 'UTC' } } } : {}),
        }));
      } else {
        await mailroom.broadcast(secret, { broadcastRef: ref, recipients });
      }
    }
    const t1 = performance.now();
    if (LOCAL_TIME) {
      // The plan took: the deliveries wait for five distinct hours (six zones, the bad one on UTC's 09:00).
      const hours = (await mailroom.getMailing(secret, ref as string)).waiting ?? [];
      if (hours.length < 5) throw new Error(`local time: waiting by hour ${JSON.stringify(hours)}`);
    }
    clockOffsetMs = 0;
    const done = new Promise<void>((resolve) => {
      mailroom.on('broadcast:completed', (event) => {
        if (event.ref === ref) resolve();
      });
    });
    phase = 'deliver';
    const cpu0 = process.cpuUsage();
    const main0 = mainThreadCpuMicros();
    const loop0 = performance.eventLoopUtilization();
    mailroom.worker.start();
    await done;
    const t2 = performance.now();
    const cpu = process.cpuUsage(cpu0);
    const main1 = mainThreadCpuMicros();
    const loop = performance.eventLoopUtilization(loop0);
    let webhookSeconds: number | undefined;
    if (webhookPort) {
      // The sender loop runs on with the worker until every event has been delivered.
      while ((await mailroom.webhooks.queue()).oldestPendingAgeMs !== null) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      webhookSeconds = +((performance.now() - t1) / 1000).toFixed(2);
    }
    await mailroom.worker.stop();
    const view = await mailroom.getMailing(secret, ref as string);
    if (view.counts.sent !== N) {
      const [bad] = await mailroom.listDeliveries(secret, ref as string, { limit: 1, status: 'failed' });
      throw new Error(`mailroom: counts ${JSON.stringify(view.counts)}: ${bad?.lastError}`);
    }
    const deliverSeconds = (t2 - t1) / 1000;
    if (TRACKING) {
      const mailing = await mailroom.store.getMailing(project.id, ref as string);
      const links = await mailroom.store.getLinkMap(mailing?.id ?? '');
      if (!links?.length) throw new Error('tracking on, but no link map was kept');
    }
    return {
      acceptSeconds: +((t1 - t0) / 1000).toFixed(2),
      deliverSeconds: +deliverSeconds.toFixed(2),
      perSecond: Math.round(N / deliverSeconds),
      cpuMicrosPerMessage: Math.round((cpu.user + cpu.system) / N),
      mainThreadBusy: +loop.utilization.toFixed(2),
      mainThreadCpuMicrosPerMessage: main0 < 0 ? -1 : Math.round((main1 - main0) / N),
      ...(webhookSeconds === undefined ? {} : { webhookSeconds }),
    };
  } finally {
    await mailroom.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const sampler = process.env.BENCH_MEMORY_TRACE
  ? setInterval(() => {
      const sample = process.memoryUsage();
      if (!peakSample || sample.rss > peakSample.rss) peakSample = { ...sample, phase };
    }, 100)
  : undefined;
const result = await mailroomRun();
if (sampler) {
  clearInterval(sampler);
  const mib = (n: number) => Math.round(n / 2 ** 20);
  process.stderr.write(
    `memory at peak RSS (MiB): ${JSON.stringify(Object.fromEntries(Object.entries(peakSample ?? {}).map(([k, v]) => [k, typeof v === 'number' ? mib(v) : v])))}\n`,
  );
}
process.stdout.write(
  `${JSON.stringify({ ...result, peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024) })}\n`,
);
