/**
 * Issue 3: claim-and-complete throughput of the delivery queue, no transport. N due deliveries are
 * committed, then claimed in batches of 100 and each completed as sent, as a worker would. The memory
 * store is the reference in the same run. Targets: SQLite >= 50,000 deliveries/s, PostgreSQL >= 10,000.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@mailroom/core';
import { makeBatch, makeDelivery, makeMailing, makeProject, makeSecret } from '../packages/core/src/testing/store-fixtures.js';
import { memoryStore } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { median, peakRssMiB, report } from './support/measure.js';

const N = Number(process.env.BENCH_DELIVERIES ?? 20_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const PG = process.env.MAILROOM_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

type Made = { store: Store; drop: () => Promise<void> };

async function run(make: () => Promise<Made>): Promise<number> {
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
      makeDelivery(mailing, batch, `u${off + i}@example.test`, { nextAttemptAt: new Date(now.getTime() - 1000) }),
    );
    await store.commitBatch({
      target: first ? { create: mailing } : { mailingId: mailing.id, allowStatus: ['queued'], setStatus: 'queued' },
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
    await Promise.all(
      claimed.map((d) =>
        store.completeDelivery(d.id, d.leaseToken, { status: 'sent', lastResponse: '250 ok', sentAt: new Date(), now: new Date() }),
      ),
    );
    done += claimed.length;
  }
  const seconds = (performance.now() - t0) / 1000;
  if (done !== N) throw new Error(`claimed ${done} of ${N}`);
  await store.close();
  await drop();
  return Math.round(N / seconds);
}

async function pg(): Promise<Made> {
  const pgm = await import('pg');
  const schema = `bench_${Date.now().toString(36)}`;
  const admin = new pgm.default.Client({ connectionString: PG });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const url = new URL(PG);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    store: sqlStore({ url: url.toString() }),
    drop: async () => {
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    },
  };
}

const cases: Array<[string, () => Promise<Made>]> = [
  ['memory', async () => ({ store: memoryStore(), drop: async () => {} })],
  [
    'sqlite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-'));
      return { store: sqlStore({ url: join(dir, 'bench.db') }), drop: async () => rmSync(dir, { recursive: true }) };
    },
  ],
  ['postgres', pg],
];
const results: Record<string, { runs: number[]; median: number }> = {};
for (const [name, make] of cases) {
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
  ratioToMemory: Object.fromEntries(Object.entries(results).map(([k, v]) => [k, +(v.median / mem).toFixed(2)])),
  peakRssMiB: peakRssMiB(),
});
