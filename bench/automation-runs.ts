/**
 * Issue 39: runs whose next step falls due at the same moment. An engine on a SQLite file with the
 * memory transport; N contacts each get a tracked `joined` event (a workflow: wait 1 h, then send), the
 * clock moves an hour, and every run's step is due at once. Reported: the time to run every due step
 * (claims, the send path's accept, the run's fenced write), the time for the worker to deliver them, and,
 * as the baseline in the same run, the time to accept and deliver N plain sends of the same message.
 * Peak RSS after each size: it should stay flat as N grows (runs are rows, claimed in batches).
 *
 * BENCH_AUTOMATION_SIZES: comma-separated N (default 2000,10000). BENCH_RUNS rounds per size (default 1).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, manualClock, workflow } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { median, peakRssMiB, report } from './support/measure.js';

const SIZES = (process.env.BENCH_AUTOMATION_SIZES ?? '2000,10000').split(',').map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 1);
const SENDER = 'news@example.com';

async function round(n: number) {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-automations-'));
  const clock = manualClock(new Date('2031-01-01T00:00:00.000Z'));
  const transport = memoryTransport();
  const mailroom = createMailroom({
    store: sqlStore({ url: join(dir, 'mailroom.db') }),
    transport,
    clock,
    automations: { batchSize: 200 },
    worker: { batchSize: 250 },
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
    await mailroom.automations.create(
      secret,
      workflow('Later').on('joined').wait('1h').send({ template: 'hello', sender: SENDER }).build(),
    );
    let t = performance.now();
    for (let i = 0; i < n; i++) {
      await mailroom.track(secret, {
        event: 'joined',
        contact: `c${i}@example.test`,
        id: `j${i}`,
        properties: { n: i },
      });
    }
    const trackPerSecond = Math.round(n / ((performance.now() - t) / 1000));
    await mailroom.automations.runDue();
    clock.advance(3_600_000);
    t = performance.now();
    const ran = await mailroom.automations.runDue();
    const stepsSeconds = (performance.now() - t) / 1000;
    t = performance.now();
    await mailroom.worker.drain();
    const deliverSeconds = (performance.now() - t) / 1000;
    if (ran !== n || transport.outbox.length !== n)
      throw new Error(`ran ${ran}, sent ${transport.outbox.length} of ${n}`);

    // Baseline: the same number of plain sends, accepted then delivered.
    transport.clear();
    t = performance.now();
    for (let i = 0; i < n; i++) {
      await mailroom.send(secret, {
        sender: SENDER,
        template: { ref: 'hello' },
        recipients: `p${i}@example.test`,
      });
    }
    const baselineAcceptSeconds = (performance.now() - t) / 1000;
    t = performance.now();
    await mailroom.worker.drain();
    const baselineDeliverSeconds = (performance.now() - t) / 1000;
    return { trackPerSecond, stepsSeconds, deliverSeconds, baselineAcceptSeconds, baselineDeliverSeconds };
  } finally {
    await mailroom.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const n of SIZES) {
  const rounds: Array<Awaited<ReturnType<typeof round>>> = [];
  for (let r = 0; r < RUNS; r++) rounds.push(await round(n));
  const med = (k: keyof (typeof rounds)[number]) => Number(median(rounds.map((x) => x[k])).toFixed(2));
  report('automation-runs', {
    runs: n,
    trackPerSecond: med('trackPerSecond'),
    dueStepsSeconds: med('stepsSeconds'),
    dueStepsPerSecond: Math.round(n / med('stepsSeconds')),
    deliverSeconds: med('deliverSeconds'),
    baselinePlainSendAcceptSeconds: med('baselineAcceptSeconds'),
    baselinePlainDeliverSeconds: med('baselineDeliverSeconds'),
    peakRssMiB: peakRssMiB(),
  });
}
