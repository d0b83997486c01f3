/**
 * One Mailroom run of `delivery-broadcast`, in a process of its own so that its peak RSS is its own:
 * `delivery-run <smtp-port> <recipients> <render-threads> <batch-size>`. Accepts the broadcast into a
 * fresh SQLite file, delivers it, and prints one JSON line with the figures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { NEWSLETTER_MJML, newsletterVariables } from './newsletter.js';

const [port, recipients, threads, batch] = process.argv.slice(2).map(Number);
if (!port || !recipients || threads === undefined || !batch) {
  throw new Error('usage: delivery-run <smtp-port> <recipients> <render-threads> <batch-size>');
}
const N = recipients;
const THREADS = threads;
const BATCH = batch;

interface RunResult {
  acceptSeconds: number;
  deliverSeconds: number;
  perSecond: number;
}

async function mailroomRun(): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-delivery-'));
  const transport = smtpTransport({ host: '127.0.0.1', port, maxConnections: 5, ignoreTLS: true });
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
    const view = await mailroom.getMailing(secret, ref as string);
    if (view.counts.sent !== N) {
      const [bad] = await mailroom.listDeliveries(secret, ref as string, { limit: 1, status: 'failed' });
      throw new Error(`mailroom: counts ${JSON.stringify(view.counts)}: ${bad?.lastError}`);
    }
    const deliverSeconds = (t2 - t1) / 1000;
    return {
      acceptSeconds: +((t1 - t0) / 1000).toFixed(2),
      deliverSeconds: +deliverSeconds.toFixed(2),
      perSecond: Math.round(N / deliverSeconds),
    };
  } finally {
    await mailroom.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const result = await mailroomRun();
process.stdout.write(
  `${JSON.stringify({ ...result, peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024) })}\n`,
);
