import pg from 'pg';
import { randomUUID } from 'node:crypto';
const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test?options=-c%20search_path%3Dmr_bench' }); await c.connect();
const cols = ['id','project_id','mailing_id','batch_id','address','name','variables','traits','status','attempts','next_attempt_at','lease_expires_at','lease_token','message_id','last_response','last_error','sent_at','content','created_at','updated_at'];
const row = (i: number, b: number) => { const id = 'dlv_' + randomUUID(); return [id, 'prj', 'mlg_x' + b, 'bat', `a${i}@x.com`, 'Ann', '{"a":1}', '{}', 'queued', 0, 1000, null, 0, `<${id}>`, null, null, null, null, 1, 1]; };
let t = performance.now();
for (let b = 0; b < 20; b++) {
  const rows = Array.from({ length: 250 }, (_, i) => row(i, b));
  let n = 0; const vals = rows.map(() => '(' + cols.map(() => '$' + ++n).join(',') + ')').join(',');
  await c.query(`INSERT INTO mailroom_deliveries (${cols}) VALUES ${vals} ON CONFLICT (mailing_id, address) DO NOTHING`, rows.flat());
}
console.log('values ms/batch', ((performance.now() - t) / 20).toFixed(1));
const types = ['text','text','text','text','text','text','jsonb','jsonb','text','int','bigint','bigint','bigint','text','text','text','bigint','jsonb','bigint','bigint'];
t = performance.now();
for (let b = 0; b < 20; b++) {
  const rows = Array.from({ length: 250 }, (_, i) => row(i, b + 100));
  const arrays = cols.map((_, j) => rows.map((r) => r[j]));
  const sel = types.map((ty, j) => ty === 'jsonb' ? `$${j + 1}::text[]` : `$${j + 1}::${ty}[]`).join(', ');
  await c.query(`INSERT INTO mailroom_deliveries (${cols}) SELECT ${cols.map((col, j) => types[j] === 'jsonb' ? `u.${col}::jsonb` : `u.${col}`).join(', ')} FROM unnest(${sel}) AS u(${cols}) ON CONFLICT (mailing_id, address) DO NOTHING`, arrays);
}
console.log('unnest ms/batch', ((performance.now() - t) / 20).toFixed(1));
await c.end();
