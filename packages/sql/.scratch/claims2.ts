import { sqlStore } from '../src/index.js';
import { makeBatch, makeDelivery, makeMailing, makeProject, makeSecret, testTime } from '../../core/src/testing/store-fixtures.js';
import mysql from 'mysql2/promise';
const admin = await mysql.createConnection({ uri: 'mysql://root@127.0.0.1:3306/test' });
await admin.query('DROP DATABASE IF EXISTS mr_explain2'); await admin.query('CREATE DATABASE mr_explain2');
const url = 'mysql://root@127.0.0.1:3306/mr_explain2';
for (let round = 0; round < 150; round++) {
  const [tables] = await admin.query<any[]>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'mr_explain2' AND table_name NOT LIKE 'mailroom\\_migrations%'");
  for (const t of tables) await admin.query(`DELETE FROM mr_explain2.${t.name}`);
  const stores = [sqlStore({ url, poolSize: 4 }), sqlStore({ url, poolSize: 4 }), sqlStore({ url, poolSize: 4 })];
  for (const s of stores) await s.init();
  const store = stores[0]!;
  const p = makeProject(); await store.createProject(p, makeSecret(p.id));
  const m = makeMailing(p.id); const b = makeBatch(m.id);
  const ds = Array.from({ length: 300 }, (_, i) => makeDelivery(m, b, `r${String(i).padStart(5,'0')}@x.com`, { nextAttemptAt: testTime(-i) }));
  await store.commitBatch({ target: { create: m }, batch: b, deliveries: ds, profiles: [], profileOptions: { onExistingTrait: 'preserve', onExistingProfile: 'preserve' }, sourceJobs: [], now: testTime() });
  const res = await Promise.all(Array.from({ length: 8 }, (_, i) => stores[i % 3]!.claimDeliveries({ now: testTime(0), limit: 75, leaseMs: 60000 })));
  const total = res.reduce((a, r) => a + r.length, 0);
  if (total !== 300) {
    const got = new Set(res.flat().map((d) => d.address));
    const missed = ds.filter((d) => !got.has(d.address)).map((d) => d.address);
    console.log('round', round, res.map((r) => r.length), total, missed, res.map((r) => `${r[0]?.address}..${r.at(-1)?.address}`));
  }
  for (const s of stores) await s.close();
}
await admin.query('DROP DATABASE mr_explain2'); await admin.end();
