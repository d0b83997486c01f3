/**
 * One run of `topic-broadcast`, in a process of its own: `topic-run <smtp-port> <contacts> <topic|group>
 * [<http-port-file>]`. A fresh SQLite file holds `contacts` profiles in group `all`, every other one
 * subscribed to the opt-in topic `news` and also a member of group `half`. `topic` sends to group `all`
 * with `options.topic: 'news'`; `group` sends to group `half` without a topic: the same recipients. Timed
 * from `worker.start()` (the source is expanded by the worker) to the broadcast's completion. Prints one
 * JSON line. (The preference page under load is measured on `mailroom serve`: `topic-serve-run.ts`.)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { NEWSLETTER_MJML } from './newsletter.js';
import { seedTopicAudience } from './topic-seed.js';

const [portArg, contactsArg, mode] = process.argv.slice(2);
const port = Number(portArg);
const N = Number(contactsArg);
if (!port || !N || (mode !== 'topic' && mode !== 'group')) {
  throw new Error('usage: topic-run <smtp-port> <contacts> <topic|group>');
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

const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-topic-'));
const file = join(dir, 'bench.db');
const mailroom = createMailroom({
  store: sqlStore({ url: file, sqliteCacheMiB: 16 }),
  transport: smtpTransport({ host: '127.0.0.1', port, maxConnections: 5, ignoreTLS: true }),
  // The delivery benchmarks' settings: a batch of 500, 16 sends at once.
  worker: { batchSize: 500, concurrency: 16, flushEvery: 200, flushMs: 200 },
  unsubscribe: { baseUrl: 'http://127.0.0.1:1', secret: 'bench-secret-of-at-least-32-chars' },
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
  seedTopicAudience(file, project.id, { all: all.id, half: half.id }, N);

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
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpuMicros();
  const t0 = performance.now();
  mailroom.worker.start();
  await done;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const main1 = mainThreadCpuMicros();
  await mailroom.worker.stop();
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
    })}\n`,
  );
} finally {
  await mailroom.close();
  rmSync(dir, { recursive: true, force: true });
}
