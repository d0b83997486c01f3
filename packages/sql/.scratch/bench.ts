import { sqlStore } from '../src/index.js';
import { makeBatch, makeDelivery, makeMailing, makeProject, makeSecret, testTime } from '../../core/src/testing/store-fixtures.js';
import pg from 'pg';
import { rmSync } from 'node:fs';
const kind = process.argv[2] ?? 'sqlite';
let url: string;
if (kind === 'sqlite') { rmSync('/tmp/mr-bench', { recursive: true, force: true }); url = 'sqlite:/tmp/mr-bench/b.db'; }
else { const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' }); await c.connect(); await c.query('DROP SCHEMA IF EXISTS mr_bench CASCADE'); await c.query('CREATE SCHEMA mr_bench'); await c.end(); url = 'postgres://postgres@127.0.0.1:5432/test?options=-c%20search_path%3Dmr_bench'; }
const store = sqlStore({ url }); await store.init();
const p = makeProject(); await store.createProject(p, makeSecret(p.id));
const m = makeMailing(p.id);
const BATCHES = 80, SIZE = 250;
let t0 = performance.now();
for (let b = 0; b < BATCHES; b++) {
  const batch = makeBatch(m.id, { seq: b + 1 });
  const addrs = Array.from({ length: SIZE }, (_, i) => `user${b * SIZE + i}@example.com`);
  await store.commitBatch({
    target: b === 0 ? { create: m } : { mailingId: m.id, allowStatus: ['queued', 'sending'], setStatus: 'sending' },
    batch,
    deliveries: addrs.map((a) => makeDelivery(m, batch, a, { variables: { first: 'Ann', n: 1 } })),
    profiles: addrs.map((a) => ({ address: a, name: 'Ann', traits: { plan: 'free' } })),
    profileOptions: { onExistingTrait: 'preserve', onExistingProfile: 'preserve' },
    sourceJobs: [], now: testTime(),
  });
}
let dt = (performance.now() - t0) / 1000;
console.log(kind, 'commitBatch recipients/s', Math.round((BATCHES * SIZE) / dt));
t0 = performance.now();
let n = 0;
const worker = async () => {
  for (;;) {
    const claimed = await store.claimDeliveries({ now: testTime(0), limit: 100, leaseMs: 60000 });
    if (claimed.length === 0) return;
    await Promise.all(claimed.map((d) => store.completeDelivery(d.id, d.leaseToken, { status: 'sent', lastResponse: '250 ok', sentAt: testTime(1), now: testTime(1) })));
    n += claimed.length;
  }
};
await Promise.all(Array.from({ length: kind === 'sqlite' ? 1 : 4 }, worker));
dt = (performance.now() - t0) / 1000;
console.log(kind, 'claim+complete /s', Math.round(n / dt), n);
await store.close();
