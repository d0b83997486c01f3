import Database from 'better-sqlite3';
import { rmSync, mkdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
rmSync('/tmp/mr-raw', { recursive: true, force: true }); mkdirSync('/tmp/mr-raw');
const db = new Database('/tmp/mr-raw/r.db');
db.pragma('journal_mode = WAL'); db.pragma('synchronous = NORMAL'); db.pragma('cache_size = -65536');
const mode = process.argv[2] ?? 'full';
db.exec(`create table d (id text primary key, project_id text not null, mailing_id text not null, batch_id text not null, address text not null, name text not null, variables text not null, traits text not null, status text not null, attempts integer not null, next_attempt_at integer not null, lease_expires_at integer, lease_token integer not null, message_id text not null, last_response text, last_error text, sent_at integer, content text, created_at integer not null, updated_at integer not null, unique (mailing_id, address)) ${process.argv[3] === 'wr' ? 'without rowid' : ''};
create index d_ms on d (mailing_id, status);
create index d_due on d (next_attempt_at) where status in ('queued','sending');
create table p (project_id text not null, address text not null, name text, traits text not null, status text not null, labels text not null, created_at integer not null, updated_at integer not null, primary key (project_id, address)) ${process.argv[3] === 'wr' ? 'without rowid' : ''};`);
const vals = (n: number, w: number) => Array(n).fill('(' + Array(w).fill('?').join(',') + ')').join(',');
const insD = db.prepare(`insert into d values ${vals(250, 20)} on conflict (mailing_id, address) do nothing`);
const insP = db.prepare(`insert into p values ${vals(250, 8)} on conflict (project_id, address) do nothing returning address`);
const m = 'mlg_' + randomUUID(); const pid = 'prj_' + randomUUID();
const t0 = performance.now();
const N = 80;
for (let b = 0; b < N; b++) {
  const ds: unknown[] = []; const ps: unknown[] = [];
  for (let i = 0; i < 250; i++) {
    const a = `user${b * 250 + i}@example.com`; const id = 'dlv_' + randomUUID().replaceAll('-', '');
    ds.push(id, pid, m, 'bat', a, 'Ann', '{"first":"Ann","n":1}', '{}', 'queued', 0, 1000, null, 0, `<${id}@x>`, null, null, null, null, 1, 1);
    ps.push(pid, a, 'Ann', '{"plan":"free"}', 'subscribed', '[]', 1, 1);
  }
  db.exec('begin immediate');
  insD.run(ds);
  if (mode === 'full') insP.all(ps);
  db.exec('commit');
}
console.log(mode, 'raw recipients/s', Math.round(N * 250 / ((performance.now() - t0) / 1000)));
{
  const claim = db.prepare(`update d set status='sending', lease_expires_at=?, lease_token=lease_token+1, attempts=attempts+1, updated_at=? where id in (select id from d where status in ('queued','sending') and next_attempt_at <= ? and (status='queued' or lease_expires_at <= ?) order by next_attempt_at limit ?) returning *`);
  const done = db.prepare(`update d set status=?, lease_expires_at=NULL, updated_at=?, last_response=?, sent_at=? where id=? and lease_token=? and status='sending'`);
  const batched = process.argv[4] === 'tx';
  let n = 0; const t1 = performance.now();
  for (;;) {
    const rows = claim.all(60000, 2, 2000, 2000, 100) as any[];
    if (!rows.length) break;
    if (batched) db.exec('begin immediate');
    for (const r of rows) done.run('sent', 3, '250 ok', 3, r.id, r.lease_token);
    if (batched) db.exec('commit');
    n += rows.length;
  }
  console.log('claim+complete', batched ? 'tx' : 'autocommit', Math.round(n / ((performance.now() - t1) / 1000)), n);
}
