import { sqlStore } from '../src/index.js';
import { makeBatch, makeDelivery, makeMailing, makeProject, makeSecret, testTime } from '../../core/src/testing/store-fixtures.js';
import mysql from 'mysql2/promise';
const admin = await mysql.createConnection({ uri: 'mysql://root@127.0.0.1:3306/test' });
await admin.query('DROP DATABASE IF EXISTS mr_explain'); await admin.query('CREATE DATABASE mr_explain');
const url = 'mysql://root@127.0.0.1:3306/mr_explain';
const store = sqlStore({ url, poolSize: 4 });
await store.init();
const p = makeProject(); await store.createProject(p, makeSecret(p.id));
const m = makeMailing(p.id); const b = makeBatch(m.id);
const ds = Array.from({ length: 300 }, (_, i) => makeDelivery(m, b, `r${String(i).padStart(5,'0')}@x.com`, { nextAttemptAt: testTime(-i) }));
await store.commitBatch({ target: { create: m }, batch: b, deliveries: ds, profiles: [], profileOptions: { onExistingTrait: 'preserve', onExistingProfile: 'preserve' }, sourceJobs: [], now: testTime() });
const now = testTime(0).getTime();
await admin.query('USE mr_explain');
const [ids] = await admin.query<any[]>('SELECT id FROM mailroom_deliveries ORDER BY open_at LIMIT 75');
for (const q of [
  `EXPLAIN UPDATE mailroom_deliveries SET status = 'sending', lease_expires_at = 5 WHERE id IN (?)`,
  `EXPLAIN UPDATE mailroom_deliveries FORCE INDEX (PRIMARY) SET status = 'sending', lease_expires_at = 5 WHERE id IN (?)`,
  `EXPLAIN UPDATE mailroom_deliveries d JOIN (SELECT 1) x SET d.status = 'sending' WHERE d.id IN (?)`,
  `EXPLAIN SELECT * FROM mailroom_deliveries WHERE id IN (?)`,
  `EXPLAIN UPDATE mailroom_deliveries SET lease_expires_at = 5 WHERE status = 'sending' AND id IN (?) AND ((id = 'a' AND lease_token = 1) OR (id = 'b' AND lease_token = 2))`,
]) {
  const [rows] = await admin.query<any[]>(q, [ids.map((r) => r.id)]);
  console.log(rows.map((e: any) => `${e.table}:${e.type}:${e.key}:${e.rows}:${e.Extra}`).join(' | '));
}
await store.close(); await admin.query('DROP DATABASE mr_explain'); await admin.end();
