/**
 * Issue 3: the delivery queue without a transport. 20,000 due deliveries, then claims of the worker's
 * `batchSize` and their outcomes (`completeDeliveries`) until none is left, in deliveries/s, per store;
 * the memory store is the reference. Targets: SQLite file >= 50,000 deliveries/s, PostgreSQL >= 10,000.
 * `BENCH_CLAIM_LIMIT` (default: the worker's `batchSize`) and `BENCH_OUTCOME_GROUP` (default: all the
 * claimed deliveries at once; the worker writes its outcomes in groups of `flushEvery`) vary the shape.
 */
import { WORKER_DEFAULTS } from '@mailroom/core';
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
const LIMIT = Number(process.env.BENCH_CLAIM_LIMIT ?? WORKER_DEFAULTS.batchSize);
const GROUP = Number(process.env.BENCH_OUTCOME_GROUP ?? LIMIT);
/** `BENCH_STORES=sqlite,postgres`: only these stores (all by default). */
const ONLY = process.env.BENCH_STORES?.split(',').map((s) => s.trim());

/** One run: deliveries/s by the clock, and per CPU-second of this process (less sensitive to other load). */
async function run(make: () => Promise<BenchStore>): Promise<{ perSecond: number; perCpuSecond: number }> {
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
  // The seeding's garbage is not the loop's: collect it first (`pnpm bench` runs with --expose-gc).
  (globalThis as { gc?: () => void }).gc?.();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let done = 0;
  for (;;) {
    const claimed = await store.claimDeliveries({ now: new Date(), limit: LIMIT, leaseMs: 60_000 });
    if (claimed.length === 0) break;
    for (let i = 0; i < claimed.length; i += GROUP) {
      const now = new Date();
      const written = await store.completeDeliveries(
        claimed.slice(i, i + GROUP).map((d) => ({
          id: d.id,
          leaseToken: d.leaseToken,
          outcome: { status: 'sent' as const, lastResponse: '250 ok', sentAt: now, now },
        })),
      );
      if (written.some((w) => !w)) throw new Error('an outcome was refused');
    }
    done += claimed.length;
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  if (done !== N) throw new Error(`claimed ${done} of ${N}`);
  await store.close();
  await drop();
  return {
    perSecond: Math.round(N / seconds),
    perCpuSecond: Math.round(N / ((cpu.user + cpu.system) / 1e6)),
  };
}

const host = watchHost();
const results: Record<string, { runs: number[]; median: number; perCpuSecond: number[] }> = {};
for (const [name, make] of BENCH_STORES) {
  if (ONLY && !ONLY.includes(name)) continue;
  const measured: Array<{ perSecond: number; perCpuSecond: number }> = [];
  for (let r = 0; r < RUNS; r++) measured.push(await run(make));
  const runs = measured.map((m) => m.perSecond);
  results[name] = { runs, median: median(runs), perCpuSecond: measured.map((m) => m.perCpuSecond) };
  console.log(`${name}: ${runs.join(', ')} deliveries/s (median ${median(runs)})`);
}
const mem = results.memory?.median;
report('store-claim', {
  unit: 'deliveries/s',
  deliveries: N,
  claimLimit: LIMIT,
  outcomeGroup: GROUP,
  results,
  ...(mem
    ? {
        ratioToMemory: Object.fromEntries(
          Object.entries(results).map(([k, v]) => [k, +(v.median / mem).toFixed(2)]),
        ),
      }
    : {}),
  peakRssMiB: peakRssMiB(),
  ...host(),
});
