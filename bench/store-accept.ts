/**
 * Issue 3: accepting recipients. A loop of 250-recipient broadcast batches through the engine (parse,
 * checks, one commit per batch writing deliveries and profiles) into each store; the memory store is
 * the reference, measured in the same run. Targets: SQLite file >= 50,000 recipients/s, PostgreSQL >= 20,000.
 */
import { createMailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { median, peakRssMiB, report } from './support/measure.js';
import { BENCH_STORES, type BenchStore, watchHost } from './support/stores.js';

const BATCHES = Number(process.env.BENCH_BATCHES ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

async function run(makeStore: () => Promise<BenchStore>): Promise<number> {
  const { store, drop } = await makeStore();
  const mailroom = createMailroom({ store, transport: memoryTransport() });
  const { project, secret } = await mailroom.admin.createProject({ name: 'bench' });
  await mailroom.admin.addSender(project.id, { address: 'news@bench.test' });
  const auth = await mailroom.authenticate(secret);
  const batches = Array.from({ length: BATCHES }, (_, b) =>
    Array.from({ length: 250 }, (_, i) => ({
      address: `u${b * 250 + i}@example.test`,
      name: `User ${b * 250 + i}`,
      variables: { code: `C${i}`, tier: i % 3 },
    })),
  );
  const { ref } = await mailroom.broadcast(auth, {
    subject: 'Hi {{ recipient.firstName }}',
    sender: 'news@bench.test',
    message: '<p>Hello {{ code }}</p>',
    recipients: batches[0],
  });
  const t0 = performance.now();
  for (let b = 1; b < BATCHES; b++) {
    await mailroom.broadcast(auth, { broadcastRef: ref, recipients: batches[b] });
  }
  const seconds = (performance.now() - t0) / 1000;
  await mailroom.close();
  await drop();
  return Math.round(((BATCHES - 1) * 250) / seconds);
}

const host = watchHost();
const results: Record<string, { runs: number[]; median: number }> = {};
for (const [name, make] of BENCH_STORES) {
  const runs: number[] = [];
  for (let r = 0; r < RUNS; r++) runs.push(await run(make));
  results[name] = { runs, median: median(runs) };
  console.log(`${name}: ${runs.join(', ')} recipients/s (median ${median(runs)})`);
}
const mem = results.memory?.median ?? 1;
report('store-accept', {
  unit: 'recipients/s',
  batches: BATCHES,
  results,
  ratioToMemory: Object.fromEntries(
    Object.entries(results).map(([k, v]) => [k, +(v.median / mem).toFixed(2)]),
  ),
  peakRssMiB: peakRssMiB(),
  ...host(),
});
