import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { makeBatch, makeDelivery, makeMailing, makeProject, makeSecret } from '../../core/src/testing/store-fixtures.js';
import { sqlStore } from '../src/index.js';
const N = Number(process.env.N ?? 50000);
const mode = process.argv[2] ?? 'rowwise';
const dir = mkdtempSync(join(tmpdir(), 'rc-'));
const file = join(dir, 'x.db');
const store = sqlStore({ url: file }); await store.init();
const project = makeProject(); await store.createProject(project, makeSecret(project.id));
const now = new Date();
const mailing = makeMailing(project.id, { createdAt: now, updatedAt: now });
let first = true;
for (let off = 0; off < N; off += 1000) {
  const batch = makeBatch(mailing.id);
  const deliveries = Array.from({ length: Math.min(1000, N - off) }, (_, i) => makeDelivery(mailing, batch, `u${off + i}@example.test`, { nextAttemptAt: new Date(now.getTime() - 1000) }));
  await store.commitBatch({ target: first ? { create: mailing } : { mailingId: mailing.id, allowStatus: ['queued'], setStatus: 'queued' }, batch, deliveries, profiles: [], profileOptions: { onExistingProfile: 'preserve', onExistingTrait: 'preserve' }, sourceJobs: [], now });
  first = false;
}
await store.close();
const db = new Database(file);
db.pragma('journal_mode = WAL'); db.pragma('synchronous = NORMAL'); db.pragma('cache_size = -65536'); db.pragma('wal_autocheckpoint = 10000');
const claim = db.prepare(`UPDATE mailroom_deliveries SET status = 'sending', lease_expires_at = ?, lease_token = lease_token + 1, attempts = attempts + 1, updated_at = ? WHERE ${process.env.ROWID ? 'rowid IN (SELECT d.rowid' : 'id IN (SELECT d.id'} FROM mailroom_deliveries d WHERE d.status IN ('queued', 'sending') AND d.next_attempt_at <= ? AND (d.status = 'queued' OR d.lease_expires_at <= ?) AND d.mailing_id NOT IN (SELECT m.id FROM mailroom_mailings m WHERE m.status IN ('cancelled', 'failed')) ORDER BY d.next_attempt_at LIMIT ?) RETURNING ${mode === 'retid' ? 'id, lease_token' : mode.startsWith('rawarr') ? 'id, project_id, mailing_id, batch_id, address, name, variables, traits, status, attempts, next_attempt_at, lease_expires_at, lease_token, message_id, last_response, last_error, sent_at, content, created_at, updated_at' : '*'}`);
if (mode.startsWith('rawarr')) claim.raw(true);
const COLS = ['id','project_id','mailing_id','batch_id','address','name','variables','traits','status','attempts','next_attempt_at','lease_expires_at','lease_token','message_id','last_response','last_error','sent_at','content','created_at','updated_at'];
const pick = db.prepare(`SELECT d.id FROM mailroom_deliveries d WHERE d.status IN ('queued', 'sending') AND d.next_attempt_at <= ? AND (d.status = 'queued' OR d.lease_expires_at <= ?) AND d.mailing_id NOT IN (SELECT m.id FROM mailroom_mailings m WHERE m.status IN ('cancelled', 'failed')) ORDER BY d.next_attempt_at LIMIT ?`);
const done1 = db.prepare(`UPDATE mailroom_deliveries SET status = ?, lease_expires_at = NULL, updated_at = ?, last_response = ?, sent_at = ? WHERE id = ? AND lease_token = ? AND status = 'sending'`);
const begin = db.prepare('BEGIN IMMEDIATE'); const commit = db.prepare('COMMIT');
let tc = 0, td = 0, n = 0;
const c0 = process.cpuUsage(); const t0 = performance.now();
for (;;) {
  const a = process.cpuUsage();
  const t = Date.now();
  const rows = mode === 'rawarr' ? (claim.all(t + 60000, t, t, t, 100) as any[][]).map((v) => { const r: any = {}; for (let j = 0; j < 20; j++) r[COLS[j]] = v[j]; return r; }) : mode === 'rawarr2' ? (claim.all(t + 60000, t, t, t, 100) as any[][]).map((v) => ({ id: v[0], lease_token: v[12], x: v })) : mode === 'pick' ? (pick.all(t, t, 100) as any[]).map((r) => ({ id: r.id, lease_token: 0 })) : claim.all(t + 60000, t, t, t, 100) as any[];
  if (mode === 'pick') { const up = db.prepare("UPDATE mailroom_deliveries SET status = 'sending', lease_token = 0 WHERE id = ?"); begin.run(); for (const r of rows) up.run(r.id); commit.run(); }
  const b = process.cpuUsage(a); tc += b.user + b.system;
  if (rows.length === 0) break;
  begin.run();
  for (const r of rows) done1.run('sent', t, '250 ok', t, r.id, r.lease_token);
  commit.run();
  const c = process.cpuUsage(a); td += c.user + c.system - b.user - b.system;
  n += rows.length;
}
const cu = process.cpuUsage(c0);
console.log('raw', n, 'claim µs', (tc / n).toFixed(2), 'complete µs', (td / n).toFixed(2), 'cpu/s', Math.round(n / ((cu.user + cu.system) / 1e6)), 'wall/s', Math.round(n / ((performance.now() - t0) / 1000)));
