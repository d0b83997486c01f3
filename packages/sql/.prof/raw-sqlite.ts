import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqlStore } from '@mailroom/sql';
import Database from 'better-sqlite3';
import { makeProject, makeSecret } from '../../core/src/testing/store-fixtures.js';

const mode = process.argv[2] ?? 'single';
const withProfiles = process.argv[3] !== 'noprof';
const dir = mkdtempSync(join(tmpdir(), 'raw-'));
const file = join(dir, 'x.db');
const store = sqlStore({ url: file });
await store.init();
const p = makeProject();
await store.createProject(p, makeSecret(p.id));
await store.close();
const db = new Database(file);
db.pragma('journal_mode = WAL'); db.pragma('synchronous = NORMAL'); db.pragma('cache_size = -65536'); db.pragma('wal_autocheckpoint = 10000');
const DC = ['id','project_id','mailing_id','batch_id','address','name','variables','traits','status','attempts','next_attempt_at','lease_expires_at','lease_token','message_id','last_response','last_error','sent_at','content','created_at','updated_at'];
const PC = ['project_id','address','name','traits','status','labels','created_at','updated_at'];
const vals = (n: number, w: number) => Array.from({ length: n }, () => `(${Array(w).fill('?').join(',')})`).join(',');
const d1 = db.prepare(`INSERT INTO mailroom_deliveries (${DC}) VALUES ${vals(1, 20)} ON CONFLICT (mailing_id, address) DO NOTHING`);
const dN = db.prepare(`INSERT INTO mailroom_deliveries (${DC}) VALUES ${vals(250, 20)} ON CONFLICT (mailing_id, address) DO NOTHING`);
const p1 = db.prepare(`INSERT INTO mailroom_profiles (${PC}) VALUES ${vals(1, 8)} ON CONFLICT (project_id, address) DO NOTHING`);
const pN = db.prepare(`INSERT INTO mailroom_profiles (${PC}) VALUES ${vals(250, 8)} ON CONFLICT (project_id, address) DO NOTHING RETURNING address`);
const BATCHES = 400;
let id = 0;
const now = Date.now();
const t0 = performance.now(); const c0 = process.cpuUsage();
for (let b = 0; b < BATCHES; b++) {
  const rows: unknown[][] = []; const prows: unknown[][] = [];
  for (let i = 0; i < 250; i++) {
    const n = id++;
    const did = `dlv_${now.toString(36)}${String(n).padStart(16, '0')}`;
    rows.push([did, p.id, 'mlg_1', 'bat_' + b, `u${n}@example.test`, `User ${n}`, `{"code":"C${i}","tier":${i % 3}}`, '{}', 'queued', 0, now, null, 0, `<${did}@bench.test>`, null, null, null, null, now, now]);
    prows.push([p.id, `u${n}@example.test`, `User ${n}`, '{}', 'subscribed', '[]', now, now]);
  }
  db.exec('BEGIN IMMEDIATE');
  if (mode === 'single') {
    for (const r of rows) d1.run(r);
    if (withProfiles) for (const r of prows) p1.run(r);
  } else {
    dN.run(rows.flat());
    if (withProfiles) pN.all(prows.flat());
  }
  db.exec('COMMIT');
}
const s = (performance.now() - t0) / 1000;
const c = process.cpuUsage(c0); const cs = (c.user + c.system) / 1e6;
console.log(mode, withProfiles ? 'deliveries+profiles' : 'deliveries', 'wall', Math.round((BATCHES * 250) / s), '/s; cpu', Math.round((BATCHES * 250) / cs), '/cpu-s');
db.close();
