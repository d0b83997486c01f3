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
 * Environment: BENCH_RECIPIENTS (100000), BENCH_BASELINE (messages of the baseline, 20000), BENCH_RUNS (3),
 * BENCH_THREADS (2), BENCH_BATCH (500).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import type Nodemailer from 'nodemailer';
import { median, peakRssMiB, report } from './support/measure.js';
import { NEWSLETTER_MJML, newsletterVariables } from './support/newsletter.js';
import { type SinkProcess, startSinkProcess } from './support/sink-process.js';

// nodemailer is a dependency of @mailroom/smtp, not of the workspace root: load the same copy the transport uses.
const nodemailer = createRequire(new URL('../packages/smtp/package.json', import.meta.url))(
  'nodemailer',
) as typeof Nodemailer;

const N = Number(process.env.BENCH_RECIPIENTS ?? 100_000);
const BASELINE_N = Number(process.env.BENCH_BASELINE ?? 20_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const THREADS = Number(process.env.BENCH_THREADS ?? 2);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);

/** Messages per second of the baseline. */
async function baseline(sink: SinkProcess, html: string, text: string): Promise<number> {
  const transporter = nodemailer.createTransport({
    host: '127.0.0.1',
    port: sink.port,
    pool: true,
    maxConnections: 5,
    ignoreTLS: true,
  });
  const mail = {
    from: 'Acme News <news@acme.test>',
    to: 'Reader <reader@example.test>',
    subject: 'Your March update, Ada',
    html,
    text,
    textEncoding: 'base64' as const,
  };
  await sink.reset();
  const t0 = performance.now();
  let next = 0;
  // A plain loop with enough sends queued to keep the pool's five connections busy.
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < BASELINE_N) {
        const i = next++;
        await transporter.sendMail({
          ...mail,
          envelope: { from: 'news@acme.test', to: [`r${i}@example.test`] },
        });
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  transporter.close();
  const got = await sink.count();
  if (got !== BASELINE_N) throw new Error(`baseline: sink got ${got} of ${BASELINE_N}`);
  return Math.round(BASELINE_N / seconds);
}

interface RunResult {
  acceptSeconds: number;
  deliverSeconds: number;
  perSecond: number;
}

async function mailroomRun(
  sink: SinkProcess,
): Promise<RunResult & { sample: { html: string; text: string } }> {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-delivery-'));
  const transport = smtpTransport({ host: '127.0.0.1', port: sink.port, maxConnections: 5, ignoreTLS: true });
  const mailroom = createMailroom({
    store: sqlStore({ url: join(dir, 'bench.db') }),
    transport,
    worker: { renderThreads: THREADS, batchSize: BATCH, concurrency: 16, flushEvery: 200, flushMs: 200 },
  });
  try {
    const { project, secret } = await mailroom.admin.createProject({ name: 'Bench' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test', name: 'Acme News' });
    await mailroom.admin.createTemplate(project.id, {
      ref: 'newsletter',
      format: 'mjml',
      subject: 'Your {{ month }} update, {{ recipient.firstName }}',
      source: NEWSLETTER_MJML,
    });
    await sink.reset();
    const t0 = performance.now();
    let ref: string | undefined;
    for (let i = 0; i < N; i += 250) {
      const recipients = Array.from({ length: Math.min(250, N - i) }, (_, j) => ({
        address: `r${i + j}@example.test`,
        name: `Reader${i + j} Example`,
        variables: newsletterVariables(i + j),
      }));
      if (ref === undefined) {
        ({ ref } = await mailroom.broadcast(secret, {
          subject: 'Your {{ month }} update, {{ recipient.firstName }}',
          sender: 'news@acme.test',
          template: { ref: 'newsletter', variables: { month: 'March' } },
          recipients,
        }));
      } else {
        await mailroom.broadcast(secret, { broadcastRef: ref, recipients });
      }
    }
    const t1 = performance.now();
    const done = new Promise<void>((resolve) => {
      mailroom.on('broadcast:completed', (event) => {
        if (event.ref === ref) resolve();
      });
    });
    mailroom.worker.start();
    await done;
    const t2 = performance.now();
    await mailroom.worker.stop();
    const got = await sink.count();
    const view = await mailroom.getMailing(secret, ref as string);
    if (got !== N || view.counts.sent !== N) {
      const [bad] = await mailroom.listDeliveries(secret, ref as string, { limit: 1, status: 'failed' });
      throw new Error(`mailroom: sink got ${got}, counts ${JSON.stringify(view.counts)}: ${bad?.lastError}`);
    }
    const [first] = await mailroom.listDeliveries(secret, ref as string, { limit: 1 });
    if (!first) throw new Error('no delivery');
    const deliverSeconds = (t2 - t1) / 1000;
    return {
      acceptSeconds: +((t1 - t0) / 1000).toFixed(2),
      deliverSeconds: +deliverSeconds.toFixed(2),
      perSecond: Math.round(N / deliverSeconds),
      sample: { html: '', text: '' },
    };
  } finally {
    await mailroom.close();
    rmSync(dir, { recursive: true, force: true });
  }
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
try {
  const sample = await renderedSample();
  const baselines: number[] = [];
  const runs: RunResult[] = [];
  for (let r = 0; r < RUNS; r++) {
    baselines.push(await baseline(sink, sample.html, sample.text));
    const { sample: _unused, ...run } = await mailroomRun(sink);
    runs.push(run);
    console.log(`run ${r + 1}: baseline ${baselines.at(-1)} msg/s; mailroom ${JSON.stringify(run)}`);
  }
  const baseMedian = median(baselines);
  const mrMedian = median(runs.map((r) => r.perSecond));
  report('delivery-broadcast', {
    unit: 'messages/s',
    recipients: N,
    baselineMessages: BASELINE_N,
    renderThreads: THREADS,
    batchSize: BATCH,
    htmlBytes: Buffer.byteLength(sample.html),
    textBytes: Buffer.byteLength(sample.text),
    baseline: { runs: baselines, median: baseMedian },
    mailroom: {
      runs: runs.map((r) => r.perSecond),
      median: mrMedian,
      deliverSeconds: runs.map((r) => r.deliverSeconds),
      acceptSeconds: runs.map((r) => r.acceptSeconds),
    },
    ratioToBaseline: +(mrMedian / baseMedian).toFixed(2),
    ratiosPerRun: runs.map((r, i) => +(r.perSecond / (baselines[i] as number)).toFixed(2)),
    peakRssMiB: peakRssMiB(),
  });
} finally {
  await sink.close();
}
