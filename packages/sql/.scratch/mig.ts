import { sqlStore } from '../src/index.js';
import pg from 'pg';
const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' }); await c.connect();
for (let i = 0; i < 3; i++) {
  const schema = `mr_mig_${i}_${Date.now()}`;
  await c.query(`CREATE SCHEMA ${schema}`);
  const t0 = performance.now();
  const s = sqlStore({ url: `postgres://postgres@127.0.0.1:5432/test?options=-c%20search_path%3D${schema}` });
  await s.init();
  const t1 = performance.now();
  await s.init();
  await s.close();
  console.log('migrate ms', Math.round(t1 - t0));
  await c.query(`DROP SCHEMA ${schema} CASCADE`);
}
const r = await c.query(`select count(*) from pg_namespace`); console.log('schemas', r.rows[0]);
await c.end();
