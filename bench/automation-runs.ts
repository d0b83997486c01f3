/**
 * Issue 39: runs whose next step falls due at the same moment, beside a broadcast. An engine on a SQLite
 * file with a counting transport (it keeps no message: memory is the engine's); N contacts each get a
 * tracked `joined` event (a workflow: wait 1 h, then send), the clock moves an hour, and every run's step
 * is due at once. Then, with the worker running as `mailroom worker` runs it (the delivery loop and the
 * run worker together), a broadcast of B recipients is sent at the same time. Reported, in the same run:
 * - the time until every run's message is sent (claims, the send path's accept, the fenced write, the
 *   delivery);
 * - the broadcast's rate alone (measured before and after, the mean of both) and beside the due runs;
 * - how many of the runs' messages were sent while the broadcast sent (they go out before its own);
 * - memory per size: the JS heap still used after a full GC at the round's end (what the engine keeps),
 *   the round's own peak RSS (sampled every 100 ms) with V8's reserved heap and the memory outside it at
 *   that sample (the rest is native: SQLite's caches, malloc's arenas, the threads), the process's peak RSS so far (sizes go up, so a flat
 *   figure means memory does not grow with runs), and the SQLite file's size (its page cache, 64 MiB a
 *   connection, fills as the file grows, up to that bound);
 * - the workflow's step counts (`automations.stats`: counters, no run read) and how long reading them took.
 *
 * BENCH_AUTOMATION_SIZES: comma-separated N (default 10000,100000). BENCH_BROADCAST: B (default 20000).
 * The engine's defaults, as users get them; BENCH_RUN_BATCH and BENCH_DELIVERY_BATCH set
 * `automations.batchSize` and `worker.batchSize` to compare (until session 15 the bench set 200 and 250).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createMailroom,
  type Mailroom,
  manualClock,
  type RawOutgoingMessage,
  type SendReceipt,
  type Transport,
  workflow,
} from '@mailroom/core';
import { sqlStore } from '@mailroom/sql';
import { peakRssMiB, report } from './support/measure.js';

const SIZES = (process.env.BENCH_AUTOMATION_SIZES ?? '10000,100000').split(',').map(Number);
const BROADCAST = Number(process.env.BENCH_BROADCAST ?? 20_000);
const SENDER = 'news@example.com';
const TRACK_CONCURRENCY = 8;

/** Counts what it is handed, by mailing kind; keeps nothing. */
function countingTransport() {
  const counts = { broadcast: 0, message: 0 };
  const transport: Transport = {
    name: 'counting',
    capabilities: { dkim: false, maxConcurrency: 64 },
    async send(message: RawOutgoingMessage): Promise<SendReceipt> {
      if (message.mailing?.kind === 'broadcast') counts.broadcast++;
      else counts.message++;
      return {
        messageId: message.messageId,
        accepted: message.envelope.to,
        rejected: [],
        response: '250 OK',
      };
    },
  };
  return { transport, counts };
}

/** Resolves when `done()` holds, checked every 20 ms; the seconds it took from `t0`. */
async function when(done: () => boolean, t0: number): Promise<number> {
  while (!done()) await new Promise((r) => setTimeout(r, 20));
  return (performance.now() - t0) / 1000;
}

/** A broadcast of `b` recipients, accepted in batches of 250 (its deliveries due now). */
async function broadcast(mailroom: Mailroom, secret: string, b: number, tag: string): Promise<void> {
  let ref: string | undefined;
  for (let i = 0; i < b; i += 250) {
    const recipients = Array.from({ length: Math.min(250, b - i) }, (_, j) => ({
      address: `${tag}${i + j}@example.org`,
    }));
    if (ref === undefined) {
      ({ ref } = await mailroom.broadcast(secret, {
        subject: 'News',
        sender: SENDER,
        message: '<p>Hello</p>',
        recipients,
      }));
    } else {
      await mailroom.broadcast(secret, { broadcastRef: ref, recipients });
    }
  }
}

/**
 * Samples memory every 100 ms until stopped: the highest RSS, MiB, and at that sample what V8's heap had
 * reserved (`heapTotal`) and what lived outside it (`external`, buffers included), so that the rest of the
 * RSS is native memory (SQLite's page caches, malloc's arenas, the threads' own heaps and code).
 */
function rssSampler() {
  let peak = process.memoryUsage();
  const sample = () => {
    const now = process.memoryUsage();
    if (now.rss > peak.rss) peak = now;
  };
  const timer = setInterval(sample, 100);
  return () => {
    clearInterval(timer);
    sample();
    const mib = (n: number) => Math.round(n / 2 ** 20);
    return { rss: mib(peak.rss), heapTotal: mib(peak.heapTotal), external: mib(peak.external) };
  };
}

/** The JS heap in use after a full GC, MiB (the bench runs with `--expose-gc`). */
function heapAfterGcMiB(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  return Math.round(process.memoryUsage().heapUsed / 2 ** 20);
}

/** The SQLite file and its WAL, MiB. */
function fileMiB(path: string): number {
  const size = (p: string) => {
    try {
      return statSync(p).size;
    } catch {
      return 0;
    }
  };
  return Math.round((size(path) + size(`${path}-wal`)) / 2 ** 20);
}

async function round(n: number) {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-automations-'));
  const roundPeak = rssSampler();
  const clock = manualClock(new Date('2031-01-01T00:00:00.000Z'));
  const { transport, counts } = countingTransport();
  const mailroom = createMailroom({
    store: sqlStore({ url: join(dir, 'mailroom.db') }),
    transport,
    clock,
    ...(process.env.BENCH_RUN_BATCH
      ? { automations: { batchSize: Number(process.env.BENCH_RUN_BATCH) } }
      : {}),
    ...(process.env.BENCH_DELIVERY_BATCH
      ? { worker: { batchSize: Number(process.env.BENCH_DELIVERY_BATCH) } }
      : {}),
  });
  try {
    const { project, secret } = await mailroom.admin.createProject({ name: 'Bench' });
    await mailroom.admin.addSender(project.id, { address: SENDER });
    await mailroom.admin.createTemplate(project.id, {
      ref: 'hello',
      format: 'text',
      subject: 'Hello {{ event.n }}',
      source: 'Hi {{ contact.address }}',
    });
    const { id: workflowId } = await mailroom.automations.create(
      secret,
      workflow('Later').on('joined').wait('1h').send({ template: 'hello', sender: SENDER }).build(),
    );

    /** The broadcast's rate with nothing else to do: deliveries per second. */
    async function broadcastAlone(tag: string): Promise<number> {
      const before = counts.broadcast;
      await broadcast(mailroom, secret, BROADCAST, tag);
      const t0 = performance.now();
      mailroom.worker.start();
      const seconds = await when(() => counts.broadcast - before >= BROADCAST, t0);
      await mailroom.worker.stop();
      return BROADCAST / seconds;
    }

    let t = performance.now();
    let next = 0;
    const tracker = async () => {
      for (let i = next++; i < n; i = next++) {
        await mailroom.track(secret, {
          event: 'joined',
          contact: `c${i}@example.test`,
          id: `j${i}`,
          properties: { n: i },
        });
      }
    };
    await Promise.all(Array.from({ length: TRACK_CONCURRENCY }, tracker));
    const trackPerSecond = Math.round(n / ((performance.now() - t) / 1000));
    // Every run reaches its wait (its timer set an hour on).
    await mailroom.automations.runDue();

    const aloneBefore = await broadcastAlone('a');
    // The hour passes: every run's send step is due now; the broadcast is accepted at the same moment.
    clock.advance(3_600_000);
    const broadcastBefore = counts.broadcast;
    await broadcast(mailroom, secret, BROADCAST, 'b');
    t = performance.now();
    mailroom.worker.start();
    let runsBesideBroadcast = 0;
    const [broadcastSeconds, runsSeconds] = await Promise.all([
      when(() => counts.broadcast - broadcastBefore >= BROADCAST, t).then((seconds) => {
        runsBesideBroadcast = counts.message;
        return seconds;
      }),
      when(() => counts.message >= n, t),
    ]);
    await mailroom.worker.stop();
    const aloneAfter = await broadcastAlone('c');
    const alone = (aloneBefore + aloneAfter) / 2;
    const beside = BROADCAST / broadcastSeconds;
    if (counts.message !== n) throw new Error(`sent ${counts.message} run messages of ${n}`);
    const read = performance.now();
    const stats = await mailroom.automations.stats(secret, workflowId);
    const statsMs = Number((performance.now() - read).toFixed(1));
    const steps = stats.steps.map((s) => `${s.id}: ${s.entered}/${s.waiting}/${s.passed}/${s.exited}`);
    if (stats.steps.some((s) => s.entered !== n || s.passed !== n)) {
      throw new Error(`step counts ${steps.join(', ')} for ${n} runs`);
    }
    return {
      trackPerSecond,
      runsSentSeconds: Number(runsSeconds.toFixed(1)),
      runsSentPerSecond: Math.round(n / runsSeconds),
      broadcastAlonePerSecond: Math.round(alone),
      broadcastAloneBeforeAfter: [Math.round(aloneBefore), Math.round(aloneAfter)],
      broadcastBesideRunsPerSecond: Math.round(beside),
      broadcastKeeps: `${Math.round((beside / alone) * 100)} %`,
      runMessagesBesideBroadcast: runsBesideBroadcast,
      stepCounts: `${steps.join(', ')} (entered/waiting/passed/exited), read in ${statsMs} ms`,
      heapAfterGcMiB: heapAfterGcMiB(),
      databaseMiB: fileMiB(join(dir, 'mailroom.db')),
      ...(({ rss, heapTotal, external }) => ({
        roundPeakRssMiB: rss,
        atPeakHeapTotalMiB: heapTotal,
        atPeakExternalMiB: external,
      }))(roundPeak()),
    };
  } finally {
    roundPeak();
    await mailroom.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const n of SIZES) {
  report('automation-runs', { runs: n, broadcast: BROADCAST, ...(await round(n)), peakRssMiB: peakRssMiB() });
}
