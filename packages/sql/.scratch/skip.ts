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
const variants: Record<string, string> = {
  full: `SELECT d.id FROM mailroom_deliveries d WHERE d.open_at <= ${now} AND (d.status = 'queued' OR d.lease_expires_at <= ${now}) AND NOT EXISTS (SELECT 1 FROM mailroom_mailings m WHERE m.id = d.mailing_id AND m.status IN ('cancelled','failed')) ORDER BY d.open_at LIMIT 75 FOR UPDATE SKIP LOCKED`,
  nosub: `SELECT d.id FROM mailroom_deliveries d WHERE d.open_at <= ${now} AND (d.status = 'queued' OR d.lease_expires_at <= ${now}) ORDER BY d.open_at LIMIT 75 FOR UPDATE SKIP LOCKED`,
  bare: `SELECT d.id FROM mailroom_deliveries d WHERE d.open_at <= ${now} ORDER BY d.open_at LIMIT 75 FOR UPDATE SKIP LOCKED`,
  force: `SELECT d.id FROM mailroom_deliveries d FORCE INDEX (mailroom_deliveries_due) WHERE d.open_at <= ${now} AND (d.status = 'queued' OR d.lease_expires_at <= ${now}) AND NOT EXISTS (SELECT 1 FROM mailroom_mailings m WHERE m.id = d.mailing_id AND m.status IN ('cancelled','failed')) ORDER BY d.open_at LIMIT 75 FOR UPDATE SKIP LOCKED`,
};
for (const [name, q] of Object.entries(variants)) {
  const c1 = await mysql.createConnection({ uri: url }); const c2 = await mysql.createConnection({ uri: url });
  for (const c of [c1, c2]) { await c.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED'); await c.query('BEGIN'); }
  const [r1] = await c1.query(q) as any; const [r2] = await c2.query(q) as any;
  const [ex] = await c2.query('EXPLAIN ' + q) as any;
  console.log(name, r1.length, r2.length, ex.map((e: any) => `${e.table}:${e.type}:${e.key}:${e.Extra}`).join(' | '));
  await c1.query('ROLLBACK'); await c2.query('ROLLBACK'); await c1.end(); await c2.end();
}
await store.close(); await admin.query('DROP DATABASE mr_explain'); await admin.end();
