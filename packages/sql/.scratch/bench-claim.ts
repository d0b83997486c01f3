import { sqlStore } from '../src/index.js';
import { makeBatch, makeDelivery, makeMailing, makeProject, makeSecret, testTime } from '../../core/src/testing/store-fixtures.js';
import { rmSync } from 'node:fs';
import pg from 'pg';
rmSync('/tmp/mr-bench3', { recursive: true, force: true });
const kind = process.argv[2] ?? 'sqlite';
let url = 'sqlite:/tmp/mr-bench3/b.db';
if (kind === 'postgres') { const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' }); await c.connect(); await c.query('DROP SCHEMA IF EXISTS mr_bench CASCADE'); await c.query('CREATE SCHEMA mr_bench'); await c.end(); url = 'postgres://postgres@127.0.0.1:5432/test?options=-c%20search_path%3Dmr_bench'; }
const store = sqlStore({ url }); await store.init();
const p = makeProject(); await store.createProject(p, makeSecret(p.id));
const m = makeMailing(p.id);
for (let b = 0; b < 80; b++) {
  const batch = makeBatch(m.id, { seq: b + 1 });
  await store.commitBatch({ target: b === 0 ? { create: m } : { mailingId: m.id, allowStatus: ['queued', 'sending'], setStatus: 'sending' }, batch,
    deliveries: Array.from({ length: 250 }, (_, i) => makeDelivery(m, batch, `u${b * 250 + i}@x.com`)), profiles: [], profileOptions: { onExistingTrait: 'preserve', onExistingProfile: 'preserve' }, sourceJobs: [], now: testTime() });
}
if (process.argv[3] === 'keep') { await store.close(); process.exit(0); }
const t0 = performance.now(); let n = 0; let tc = 0; let tw = 0;
for (;;) {
  const a = performance.now();
  const claimed = await store.claimDeliveries({ now: testTime(0), limit: 100, leaseMs: 60000 });
  const b = performance.now(); tc += b - a;
  if (claimed.length === 0) break;
  await Promise.all(claimed.map((d) => store.completeDelivery(d.id, d.leaseToken, { status: 'sent', lastResponse: '250 ok', sentAt: testTime(1), now: testTime(1) })));
  tw += performance.now() - b;
  n += claimed.length;
}
const dt = (performance.now() - t0) / 1000;
console.log('claim+complete /s', Math.round(n / dt), n, 'claim ms', Math.round(tc), 'complete ms', Math.round(tw));
if (process.argv[3] === "keep") process.exit(0);
await store.close();
