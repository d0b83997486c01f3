import {
  makeBatch,
  makeDelivery,
  makeMailing,
  makeProject,
  makeSecret,
} from '../packages/core/src/testing/store-fixtures.js';
import { median, peakRssMiB, report } from './support/measure.js';
import { BENCH_STORES, type BenchStore, watchHost } from './support/stores.js';

const N = Number(process.env.BENCH_DELIVERIES ?? 20_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

async function run(make: () => Promise<BenchStore>): Promise<number> {
  const { store, drop } = await make();
  await store.init();
  const project = makeProject();
  await store.createProject(project, makeSecret(project.id));
  const now = new Date();
  const mailing = makeMailing(project.id, { createdAt: now, updatedAt: now });
  let first = true;
  for (let off = 0; off < N; off += 1000) {
    const batch = makeBatch(mailing.id);
    const deliveries = Array.from({ length: Math.min(1000, N - off) }, (_, i) =>
      makeDelivery(mailing, batch, `u${off + i}@example.test`, {
        nextAttemptAt: new Date(now.getTime() - 1000),
      }),
    );
    await store.commitBatch({
      target: first
        ? { create: mailing }
        : { mailingId: mailing.id, allowStatus: ['queued'], setStatus: 'queued' },
      batch,
      deliveries,
      profiles: [],
      profileOptions: { onExistingProfile: 'preserve', onExistingTrait: 'preserve' },
      sourceJobs: [],
      now,
    });
    first = false;
  }
  const t0 = performance.now();
  let done = 0;
  for (;;) {
    const claimed = await store.claimDeliveries({ now: new Date(), limit: 100, leaseMs: 60_000 });
    if (claimed.length === 0) break;
    const now = new Date();
    const written = await store.completeDeliveries(
      claimed.map((d) => ({
        id: d.id,
        leaseToken: d.leaseToken,
        outcome: { status: 'sent' as const, lastResponse: '250 ok', sentAt: now, now },
      })),
    );
    if (written.some((w) => !w)) throw new Error('an outcome was refused');
    done += claimed.length;
  }
  const seconds = (performance.now() - t0) / 1000;
  if (done !== N) throw new Error(`claimed ${done} of ${N}`);
  await store.close();
  await drop();
  return Math.round(N / seconds);
}

const host = watchHost();
const results: Record<string, { runs: number[]; median: number }> = {};
for (const [name, make] of BENCH_STORES) {
  const runs: number[] = [];
  for (let r = 0; r < RUNS; r++) runs.push(await run(make));
  results[name] = { runs, median: median(runs) };
  console.log(`${name}: ${runs.join(', ')} deliveries/s (median ${median(runs)})`);
}
const mem = results.memory?.median ?? 1;
report('store-claim', {
  unit: 'deliveries/s',
  deliveries: N,
  results,
  ratioToMemory: Object.fromEntries(
    Object.entries(results).map(([k, v]) => [k, +(v.median / mem).toFixed(2)]),
  ),
  peakRssMiB: peakRssMiB(),
  ...host(),
});
