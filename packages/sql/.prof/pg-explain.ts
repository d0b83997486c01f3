import pg from 'pg';
import { sqlStore } from '../src/index.js';
import { DELIVERY_COLUMNS, DELIVERY_PG_TYPES } from '../src/codec.js';
const base = 'postgres://postgres@127.0.0.1:5432/test';
const schema = `prof_${Date.now().toString(36)}`;
const admin = new pg.Client({ connectionString: base }); await admin.connect();
await admin.query(`create schema ${schema}`);
const url = new URL(base); url.searchParams.set('options', `-c search_path=${schema}`);
const store = sqlStore({ url: url.toString() }); await store.init(); await store.close();
const c = new pg.Client({ connectionString: url.toString() }); await c.connect();
const cols = DELIVERY_COLUMNS; const types = DELIVERY_PG_TYPES;
const params = types.map((t, i) => `$${i + 1}::${t === 'jsonb' ? 'text' : t}[]`).join(', ');
const select = cols.map((col, j) => (types[j] === 'jsonb' ? `u.${col}::jsonb` : `u.${col}`)).join(', ');
const text = `INSERT INTO mailroom_deliveries (${cols.join(', ')}) SELECT ${select} FROM unnest(${params}) AS u(${cols.join(', ')}) ON CONFLICT (mailing_id, address) DO NOTHING`;
const now = Date.now(); let id = 0;
const mode = process.argv[2] ?? 'explain';
const mk = (b: number) => {
  const rows = Array.from({ length: 250 }, (_, i) => { const n = id++; const did = `dlv_${now.toString(36)}${String(n).padStart(16, '0')}`;
    return [did, 'prj', 'mlg_1', 'bat_' + b, `u${n}@example.test`, `User ${n}`, `{"code":"C${i}","tier":${i % 3}}`, '{}', 'queued', 0, now, null, 0, `<${did}@bench.test>`, null, null, null, null, now, now]; });
  return cols.map((_, j) => rows.map((r) => r[j]));
};
for (let b = 0; b < 100; b++) await c.query(text, mk(b));
if (mode === 'explain') {
  const r = await c.query(`EXPLAIN (ANALYZE, BUFFERS, TIMING) ${text}`, mk(1000));
  console.log(r.rows.map((x) => x['QUERY PLAN']).join('\n'));
}
let t0 = performance.now();
for (let b = 0; b < 100; b++) await c.query(text, mk(b + 2000));
console.log('unnamed', ((performance.now() - t0) / 100).toFixed(2), 'ms/batch');
t0 = performance.now();
for (let b = 0; b < 100; b++) await c.query({ name: 'ins', text, values: mk(b + 3000) });
console.log('named', ((performance.now() - t0) / 100).toFixed(2), 'ms/batch');
t0 = performance.now();
for (let b = 0; b < 100; b++) { await c.query('begin'); await c.query({ name: 'ins', text, values: mk(b + 4000) }); await c.query('commit'); }
console.log('named+tx', ((performance.now() - t0) / 100).toFixed(2), 'ms/batch');
t0 = performance.now();
for (let b = 0; b < 100; b++) mk(b + 5000);
console.log('mk only', ((performance.now() - t0) / 100).toFixed(2), 'ms/batch');
await c.end(); await admin.query(`drop schema ${schema} cascade`); await admin.end();
