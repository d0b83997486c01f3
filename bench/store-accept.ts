/**
 * Issue 3: accepting recipients. A loop of 250-recipient broadcast batches through the engine (parse,
 * checks, one commit per batch writing deliveries and profiles) into each store; the memory store is
 * the reference, measured in the same run. Targets: SQLite file >= 50,000 recipients/s, PostgreSQL >= 20,000.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Store } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { median, peakRssMiB, report } from './support/measure.js';

const BATCHES = Number(process.env.BENCH_BATCHES ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const PG = process.env.MAILROOM_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function pgSchemaStore(): Promise<{ store: Store; drop: () => Promise<void> }> {
  const pg = await import('pg');
  const schema = `bench_${Date.now().toString(36)}`;
  const admin = new pg.default.Client({ connectionString: PG });
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

async function run(makeStore: () => Promise<{ store: Store; drop: () => Promise<void> }>): Promise<number> {
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

const stores: Array<[string, () => Promise<{ store: Store; drop: () => Promise<void> }>]> = [
  ['memory', async () => ({ store: memoryStore(), drop: async () => {} })],
  [
    'sqlite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-'));
      return { store: sqlStore({ url: join(dir, 'bench.db') }), drop: async () => rmSync(dir, { recursive: true }) };
    },
  ],
  ['postgres', pgSchemaStore],
];

const results: Record<string, { runs: number[]; median: number }> = {};
for (const [name, make] of stores) {
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
  ratioToMemory: Object.fromEntries(Object.entries(results).map(([k, v]) => [k, +(v.median / mem).toFixed(2)])),
  peakRssMiB: peakRssMiB(),
});
