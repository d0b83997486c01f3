import { sqlStore } from '../src/index.js';
import { makeBatch, makeDelivery, makeMailing, makeProject, makeSecret, testTime } from '../../core/src/testing/store-fixtures.js';
import mysql from 'mysql2/promise';
const variant = process.argv[2] ?? 'A';
const admin = await mysql.createConnection({ uri: 'mysql://root@127.0.0.1:3306/test' });
const dbn = `mr_explain_${variant}`;
await admin.query(`DROP DATABASE IF EXISTS ${dbn}`); await admin.query(`CREATE DATABASE ${dbn}`);
const url = `mysql://root@127.0.0.1:3306/${dbn}`;
const store = sqlStore({ url, poolSize: 4 }); await store.init();
const conns = await Promise.all(Array.from({ length: 8 }, () => mysql.createConnection({ uri: url })));
for (const c of conns) await c.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
const now = testTime(0).getTime();
const sub = `AND NOT EXISTS (SELECT 1 FROM mailroom_mailings m WHERE m.id = d.mailing_id AND m.status IN ('cancelled','failed'))`;
const sel = variant === 'G' ? '' : {
  A: `SELECT d.id FROM mailroom_deliveries d FORCE INDEX (mailroom_deliveries_due) WHERE d.open_at <= ? AND (d.status = 'queued' OR d.lease_expires_at <= ?) ${sub} ORDER BY d.open_at LIMIT 75 FOR UPDATE SKIP LOCKED`,
  B: `SELECT d.id FROM mailroom_deliveries d FORCE INDEX (mailroom_deliveries_due) WHERE d.open_at <= ? AND (d.status = 'queued' OR d.lease_expires_at <= ?) ORDER BY d.open_at LIMIT 75 FOR UPDATE SKIP LOCKED`,
  C: `SELECT d.id FROM mailroom_deliveries d WHERE d.status = 'queued' AND d.open_at <= ? AND ? > 0 ORDER BY d.id LIMIT 75 FOR UPDATE SKIP LOCKED`,
}[variant as 'A']!;
let misses = 0; let deadlocks = 0;
for (let round = 0; round < 100; round++) {
  await admin.query(`DELETE FROM ${dbn}.mailroom_deliveries`);
  const p = makeProject(); await store.createProject(p, makeSecret(p.id));
  const m = makeMailing(p.id); const b = makeBatch(m.id);
  const ds = Array.from({ length: 300 }, (_, i) => makeDelivery(m, b, `r${String(i).padStart(5,'0')}@x.com`, { nextAttemptAt: testTime(-i) }));
  await store.commitBatch({ target: { create: m }, batch: b, deliveries: ds, profiles: [], profileOptions: { onExistingTrait: 'preserve', onExistingProfile: 'preserve' }, sourceJobs: [], now: testTime() });
  const res = await Promise.all(conns.map(async (c) => {
    if (variant === 'G') {
      try {
        await c.query('BEGIN');
        const got: string[] = [];
        let cursor: [number, string] | undefined;
        for (;;) {
          const want = 75 - got.length;
          const after = cursor ? 'AND (d.open_at > ? OR (d.open_at = ? AND d.id > ?))' : '';
          const [cands] = await c.query<any[]>(`SELECT d.id, d.open_at FROM mailroom_deliveries d FORCE INDEX (mailroom_deliveries_due) WHERE d.open_at <= ? AND (d.status = 'queued' OR d.lease_expires_at <= ?) ${after} ${sub} ORDER BY d.open_at, d.id LIMIT ${want}`, cursor ? [now, now, cursor[0], cursor[0], cursor[1]] : [now, now]);
          if (cands.length === 0) break;
          const [locked] = await c.query<any[]>(`SELECT id FROM mailroom_deliveries FORCE INDEX (PRIMARY) WHERE id IN (?) AND open_at <= ? AND (status = 'queued' OR lease_expires_at <= ?) FOR UPDATE SKIP LOCKED`, [cands.map((x) => x.id), now, now]);
          got.push(...locked.map((x) => x.id));
          const last = cands[cands.length - 1];
          cursor = [Number(last.open_at), last.id];
          if (got.length >= 75 || cands.length < want) break;
        }
        if (got.length) await c.query(`UPDATE mailroom_deliveries SET status = 'sending', lease_expires_at = ? WHERE id IN (?)`, [now + 60000, got]);
        await c.query('COMMIT');
        return got;
      } catch (e) { console.log(String(e)); deadlocks++; await c.query('ROLLBACK'); return []; }
    }
    try {
    await c.query('BEGIN');
    const [rows] = await c.query<any[]>(sel, [now, now]);
    const ids = rows.map((r) => r.id);
    if (ids.length) await c.query(`UPDATE mailroom_deliveries SET status = 'sending', lease_expires_at = ? WHERE id IN (?)`, [now + 60000, ids]);
    await c.query('COMMIT');
    return ids;
    } catch (e) { deadlocks++; await c.query('ROLLBACK'); return []; }
  }));
  const total = res.reduce((a, r) => a + r.length, 0);
  if (total !== 300) { misses++; }
}
console.log(variant, 'misses', misses, 'deadlocks', deadlocks);
for (const c of conns) await c.end();
await store.close(); await admin.query(`DROP DATABASE ${dbn}`); await admin.end();
