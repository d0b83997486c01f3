/**
 * Issue 4: a personalized broadcast end to end, against a loopback SMTP sink in its own process.
 *
 * - Baseline (same run): a plain loop over nodemailer's pooled SMTP transport (5 connections) sending one
 *   identical message, built from the same mail options every time, to each recipient.
 * - Mailroom: 100,000 recipients accepted through `mailroom.broadcast` (250 per call) into a SQLite file,
 *   an MJML template with five variables, then delivered by one worker through `smtpTransport`
 *   (5 connections) with `renderThreads` render threads. Timed from `worker.start()` to the mailing's
 *   completion (every delivery recorded `sent`); acceptance is timed separately.
 *
 * Besides messages/s, each side reports CPU time per message (its own process, and the sink's), and the
 * Mailroom run its main thread's share: figures that the machine's other load disturbs much less.
 *
 * - Mailroom with a webhook (issue 15): the same run with one webhook endpoint subscribed to `email.sent`, a
 *   receiver in its own process (`support/webhook-sink.ts`, answers 204): its rate is compared with the
 *   plain run's of the same round, and every event must have reached the receiver.
 *
 * Environment: BENCH_RECIPIENTS (100000), BENCH_BASELINE (messages of the baseline, 20000), BENCH_RUNS (3),
 * BENCH_BOUNCE_DOMAIN (unset: with a domain, every message carries a VERP return path at it),
 * BENCH_WEBHOOK (1: also run with a webhook endpoint; 0: skip),
 * BENCH_THREADS (0: on two cores shared with the sink, a render thread adds about a third more CPU per
 * message for the same rate; see BENCHMARKS.md), BENCH_BATCH (500).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createMailroom } from '@mailroom/core';
import { median, peakRssMiB, report } from './support/measure.js';
import { NEWSLETTER_MJML, newsletterVariables } from './support/newsletter.js';
import { type LoopResult, nodemailerLoop } from './support/nodemailer-loop.js';
import { type SinkProcess, startSinkProcess } from './support/sink-process.js';

const N = Number(process.env.BENCH_RECIPIENTS ?? 100_000);
const BASELINE_N = Number(process.env.BENCH_BASELINE ?? 20_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const THREADS = Number(process.env.BENCH_THREADS ?? 0);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);
const WEBHOOK = process.env.BENCH_WEBHOOK !== '0';

type BaselineResult = Omit<LoopResult, 'seconds'>;

/** Messages per second of the baseline, and its CPU time per message. */
async function baseline(sink: SinkProcess, html: string, text: string): Promise<BaselineResult> {
  const { seconds: _, ...result } = await nodemailerLoop(
    sink,
    { from: 'Acme News <news@acme.test>', subject: 'Your March update, Ada', html, text },
    BASELINE_N,
  );
  return result;
}

interface RunResult {
  acceptSeconds: number;
  deliverSeconds: number;
  perSecond: number;
  peakRssMiB: number;
  /** CPU time of the run process (every thread) per message while delivering (microseconds). */
  cpuMicrosPerMessage: number;
  /** Share of the delivery time the run's main thread was busy. */
  mainThreadBusy: number;
  /** CPU time of the run's main thread per message (microseconds; -1 without /proc). */
  mainThreadCpuMicrosPerMessage: number;
  /** CPU time of the sink process per message over the whole run (accepting included: it sends nothing). */
  sinkCpuMicrosPerMessage?: number;
  /** With a webhook endpoint: seconds from the worker's start until every event was delivered. */
  webhookSeconds?: number;
  /** With a webhook endpoint: CPU time of the receiver process per message. */
  receiverCpuMicrosPerMessage?: number;
}

/** One Mailroom run in its own process (see `support/delivery-run.ts`). */
async function mailroomRun(sink: SinkProcess, hooks?: SinkProcess): Promise<RunResult> {
  await sink.reset();
  await hooks?.reset();
  const sinkCpu0 = await sink.cpuMicros();
  const hooksCpu0 = (await hooks?.cpuMicros()) ?? 0;
  const child = spawn(
    process.execPath,
    // The live set of a run is small (under 100 MB); without a cap V8 lets garbage grow the heap far past
    // it before collecting. The cap makes it collect sooner, which is what a 300 MB budget asks.
    [
      '--max-old-space-size=160',
      '--import',
      'tsx',
      '--conditions=mailroom-source',
      fileURLToPath(new URL('./support/delivery-run.ts', import.meta.url)),
      String(sink.port),
      String(N),
      String(THREADS),
      String(BATCH),
      ...(hooks ? [String(hooks.port)] : []),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`delivery run failed (${code})`);
  const got = await sink.count();
  if (got !== N) throw new Error(`mailroom: the sink got ${got} of ${N}`);
  const result = JSON.parse(out.trim().split('\n').at(-1) as string) as RunResult;
  if (hooks) {
    const events = await hooks.count();
    if (events !== N) throw new Error(`mailroom: the webhook receiver got ${events} of ${N} events`);
    result.receiverCpuMicrosPerMessage = Math.round(((await hooks.cpuMicros()) - hooksCpu0) / N);
  }
  return { ...result, sinkCpuMicrosPerMessage: Math.round(((await sink.cpuMicros()) - sinkCpu0) / N) };
}

/** One recipient's rendered newsletter, for the baseline's identical message. */
async function renderedSample(): Promise<{ html: string; text: string }> {
  const { memoryStore, memoryTransport } = await import('@mailroom/memory');
  const transport = memoryTransport();
  const mailroom = createMailroom({ store: memoryStore(), transport });
  const { project, secret } = await mailroom.admin.createProject({ name: 'Sample' });
  await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
  await mailroom.admin.createTemplate(project.id, {
    ref: 'newsletter',
    format: 'mjml',
    source: NEWSLETTER_MJML,
  });
  await mailroom.send(secret, {
    subject: 'x',
    sender: 'news@acme.test',
    template: { ref: 'newsletter', variables: { month: 'March' } },
    recipients: [{ address: 'ada@example.test', name: 'Ada Lovelace', variables: newsletterVariables(1) }],
  });
  await mailroom.worker.drain();
  const message = transport.outbox[0];
  await mailroom.close();
  if (!message?.html) throw new Error('no sample');
  return { html: message.html, text: message.text };
}

const sink = await startSinkProcess();
const hooks = WEBHOOK ? await startSinkProcess('./webhook-sink.ts') : undefined;
try {
  const sample = await renderedSample();
  const baselineRuns: BaselineResult[] = [];
  const runs: RunResult[] = [];
  const hookRuns: RunResult[] = [];
  for (let r = 0; r < RUNS; r++) {
    const base = await baseline(sink, sample.html, sample.text);
    baselineRuns.push(base);
    const run = await mailroomRun(sink);
    runs.push(run);
    console.log(`run ${r + 1}: baseline ${JSON.stringify(base)}; mailroom ${JSON.stringify(run)}`);
    if (hooks) {
      const hooked = await mailroomRun(sink, hooks);
      hookRuns.push(hooked);
      console.log(`run ${r + 1}: mailroom with a webhook endpoint ${JSON.stringify(hooked)}`);
    }
  }
  const hookMedian = hookRuns.length > 0 ? median(hookRuns.map((r) => r.perSecond)) : undefined;
  const baselines = baselineRuns.map((b) => b.perSecond);
  const baseMedian = median(baselines);
  const mrMedian = median(runs.map((r) => r.perSecond));
  report('delivery-broadcast', {
    unit: 'messages/s',
    recipients: N,
    baselineMessages: BASELINE_N,
    renderThreads: THREADS,
    batchSize: BATCH,
    bounceDomain: process.env.BENCH_BOUNCE_DOMAIN ?? null,
    htmlBytes: Buffer.byteLength(sample.html),
    textBytes: Buffer.byteLength(sample.text),
    baseline: {
      runs: baselines,
      median: baseMedian,
      cpuMicrosPerMessage: baselineRuns.map((b) => b.cpuMicrosPerMessage),
      sinkCpuMicrosPerMessage: baselineRuns.map((b) => b.sinkCpuMicrosPerMessage),
    },
    mailroom: {
      runs: runs.map((r) => r.perSecond),
      median: mrMedian,
      deliverSeconds: runs.map((r) => r.deliverSeconds),
      acceptSeconds: runs.map((r) => r.acceptSeconds),
      peakRssMiB: runs.map((r) => r.peakRssMiB),
      cpuMicrosPerMessage: runs.map((r) => r.cpuMicrosPerMessage),
      mainThreadBusy: runs.map((r) => r.mainThreadBusy),
      mainThreadCpuMicrosPerMessage: runs.map((r) => r.mainThreadCpuMicrosPerMessage),
      sinkCpuMicrosPerMessage: runs.map((r) => r.sinkCpuMicrosPerMessage),
    },
    ...(hookMedian === undefined
      ? {}
      : {
          withWebhook: {
            runs: hookRuns.map((r) => r.perSecond),
            median: hookMedian,
            ratioToPlain: +(hookMedian / mrMedian).toFixed(3),
            ratiosPerRun: hookRuns.map(
              (r, i) => +(r.perSecond / (runs[i] as RunResult).perSecond).toFixed(3),
            ),
            deliverSeconds: hookRuns.map((r) => r.deliverSeconds),
            allEventsDeliveredSeconds: hookRuns.map((r) => r.webhookSeconds),
            cpuMicrosPerMessage: hookRuns.map((r) => r.cpuMicrosPerMessage),
            mainThreadCpuMicrosPerMessage: hookRuns.map((r) => r.mainThreadCpuMicrosPerMessage),
            receiverCpuMicrosPerMessage: hookRuns.map((r) => r.receiverCpuMicrosPerMessage),
            peakRssMiB: hookRuns.map((r) => r.peakRssMiB),
          },
        }),
    ratioToBaseline: +(mrMedian / baseMedian).toFixed(2),
    ratiosPerRun: runs.map((r, i) => +(r.perSecond / (baselines[i] as number)).toFixed(2)),
    benchProcessPeakRssMiB: peakRssMiB(),
  });
} finally {
  await sink.close();
  await hooks?.close();
}
