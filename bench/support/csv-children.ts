/**
 * The child processes of the CSV source benchmark (bench/csv-source.ts), as plain JavaScript module
 * sources: the very same code runs on the TypeScript sources under tsx and on the built packages under
 * plain node. Each child reads its parameters from the `CSV_BENCH_CHILD` environment variable (JSON) and
 * prints one JSON line. Package entries are spliced in by {@link childSource}.
 */

/** The package entry points a child imports. */
export interface ChildEntries {
  core: string;
  memory: string;
  sql: string;
}

/**
 * The engine: a broadcast with the CSV source, expanded by the worker into deliveries and profiles in a
 * SQLite file (scheduled far ahead: expansion only). Reports the rows/s of the expansion (accept, probe
 * and drain), its CPU time, the RSS after setup (runtime, modules, store open) and the peak RSS.
 */
const ENGINE = `
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createMailroom } from '@core';
import { memoryTransport } from '@memory';
import { sqlStore } from '@sql';
const { dir, url, allow, run, rows, rangeBytes, sqliteCacheMiB } = JSON.parse(process.env.CSV_BENCH_CHILD);
const dbFile = join(dir, \`engine-\${run}.db\`);
const mailroom = createMailroom({
  store: sqlStore({ url: dbFile, ...(sqliteCacheMiB ? { sqliteCacheMiB } : {}) }),
  transport: memoryTransport(),
  fetch: { allowHosts: [allow], rangeBytes },
});
const { project, secret } = await mailroom.admin.createProject({ name: 'bench' });
await mailroom.admin.addSender(project.id, { address: 'news@bench.test' });
const rssBefore = process.memoryUsage().rss;
const started = performance.now();
const cpuStart = process.cpuUsage();
const { ref } = await mailroom.broadcast(secret, {
  subject: 'Hi {{ profile.firstName }}',
  sender: 'news@bench.test',
  message: '<p>Hello {{ profile.firstName }} from {{ profile.city }}</p>',
  sources: [{ type: 'CSV', config: { label: 'bench', url, columnMappings: { email: 'address' } } }],
  options: { scheduleFor: '2099-01-01T00:00:00.000Z' },
});
await mailroom.worker.drain();
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuStart);
const view = await mailroom.getMailing(secret, ref);
if (view.counts.queued !== rows) throw new Error(\`expected \${rows} deliveries, got \${view.counts.queued}\`);
await mailroom.close();
for (const f of [dbFile, \`\${dbFile}-wal\`, \`\${dbFile}-shm\`]) rmSync(f, { force: true });
const peak = Math.round(process.resourceUsage().maxRSS / 1024);
console.log(JSON.stringify({
  rowsPerSecond: Math.round(rows / seconds),
  rowsPerCpuSecond: Math.round(rows / ((cpu.user + cpu.system) / 1e6)),
  seconds: +seconds.toFixed(2),
  rssBeforeMiB: Math.round(rssBefore / 2 ** 20),
  peakRssMiB: peak,
  growthMiB: peak - Math.round(rssBefore / 2 ** 20),
}));
process.exit(0);
`;

/**
 * The store alone: the records the CSV expander makes of the file's rows (a delivery and a profile per
 * row, the row's traits shared by both), built page by page outside the timing, committed with
 * \`commitSourcePage\` on a real source job (accepted, probe included, but not expanded by a worker).
 * Reports the rows/s of the commits alone.
 */
const STORE = `
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createMailroom } from '@core';
import { memoryTransport } from '@memory';
import { sqlStore } from '@sql';
const { dir, url, allow, run, rows, rangeBytes, sqliteCacheMiB, pageRows } = JSON.parse(process.env.CSV_BENCH_CHILD);
const CITIES = ['Zürich', 'Kraków', 'Lisboa', 'Montréal', 'Paris', 'Berlin', 'Oslo'];
const dbFile = join(dir, \`store-\${run}.db\`);
const store = sqlStore({ url: dbFile, ...(sqliteCacheMiB ? { sqliteCacheMiB } : {}) });
const mailroom = createMailroom({ store, transport: memoryTransport(), fetch: { allowHosts: [allow], rangeBytes } });
const { project, secret } = await mailroom.admin.createProject({ name: 'bench' });
await mailroom.admin.addSender(project.id, { address: 'news@bench.test' });
const { ref } = await mailroom.broadcast(secret, {
  subject: 'Hi', sender: 'news@bench.test', message: '<p>Hello</p>',
  sources: [{ type: 'CSV', config: { label: 'bench', url, columnMappings: { email: 'address' } } }],
  options: { scheduleFor: '2099-01-01T00:00:00.000Z' },
});
const job = await store.claimSourceJob({ now: new Date(), leaseMs: 3_600_000 });
const notBefore = new Date('2099-01-01T00:00:00.000Z');
const labels = ['bench'];
let ms = 0;
let cpuMicros = 0;
for (let start = 0; start < rows; start += pageRows) {
  const now = new Date();
  const deliveries = [];
  const profiles = [];
  for (let i = start; i < Math.min(rows, start + pageRows); i++) {
    const address = \`user\${i}@example.test\`;
    const traits = { firstName: \`First\${i}\`, lastName: \`Last\${i}\`, city: CITIES[i % CITIES.length], plan: \`plan-\${i % 5}\` };
    const id = \`dlv_\${job.id.slice(4, 21)}\${(i + 2).toString(36).padStart(8, '0')}\`;
    deliveries.push({
      id, projectId: job.projectId, mailingId: job.mailingId, batchId: job.id, address, name: \`user\${i}\`,
      variables: {}, traits, status: 'queued', attempts: 0, nextAttemptAt: notBefore, leaseExpiresAt: null,
      leaseToken: 0, messageId: \`<\${id}@bench.test>\`, lastResponse: null, lastError: null, sentAt: null,
      content: null, createdAt: now, updatedAt: now,
    });
    profiles.push({ address, traits, labels });
  }
  const cpu = process.cpuUsage();
  const t = performance.now();
  const result = await store.commitSourcePage(job.id, job.leaseToken, {
    deliveries, profiles,
    profileOptions: { onExistingProfile: 'preserve', onExistingTrait: 'preserve', groupId: null },
    patch: { rowsDone: start + deliveries.length },
    leaseUntil: new Date(now.getTime() + 3_600_000), now,
  });
  ms += performance.now() - t;
  const used = process.cpuUsage(cpu);
  cpuMicros += used.user + used.system;
  if (!result || result.inserted !== deliveries.length) throw new Error('commitSourcePage lost rows');
}
const view = await mailroom.getMailing(secret, ref);
if (view.counts.queued !== rows) throw new Error(\`expected \${rows} deliveries, got \${view.counts.queued}\`);
await mailroom.close();
for (const f of [dbFile, \`\${dbFile}-wal\`, \`\${dbFile}-shm\`]) rmSync(f, { force: true });
console.log(JSON.stringify({ rowsPerSecond: Math.round(rows / (ms / 1000)), rowsPerCpuSecond: Math.round(rows / (cpuMicros / 1e6)) }));
process.exit(0);
`;

/**
 * The driver alone: better-sqlite3 on the store's schema (migrated by the store) and pragmas, one
 * transaction per page, the parameters of every statement prepared before the timing starts, the WAL
 * checkpointed inline every 10,000 pages (the commits that do it are timed). Modes:
 * \`set\` (a delivery and a profile per row, each table one statement per page over \`jsonb_each\` of
 * a JSON text, as the store writes them), \`set-deliveries\` (deliveries alone) and \`single\` (a
 * prepared single-row statement per delivery and per profile, as the store wrote them before).
 */
const RAW = `
import { createRequire } from 'node:module';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { sqlStore } from '@sql';
const { dir, run, rows, sqliteCacheMiB, pageRows, mode, sqlPackage } = JSON.parse(process.env.CSV_BENCH_CHILD);
const Database = createRequire(sqlPackage)('better-sqlite3');
const CITIES = ['Zürich', 'Kraków', 'Lisboa', 'Montréal', 'Paris', 'Berlin', 'Oslo'];
const dbFile = join(dir, \`raw-\${mode}-\${run}.db\`);
const store = sqlStore({ url: dbFile });
await store.init();
await store.close();
const db = new Database(dbFile);
// The store's pragmas (sqlite-database.ts).
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma(\`cache_size = -\${Math.round((sqliteCacheMiB ?? 64) * 1024)}\`);
db.pragma('temp_store = MEMORY');
db.pragma('journal_size_limit = 67108864');
// The store checkpoints on a thread of its own (sqlite-checkpointer.ts), which measured no cheaper for
// this writer than checkpoints inline at the thread's own inline threshold, which this takes.
db.pragma('wal_autocheckpoint = 10000');
const COLUMNS = ['id', 'project_id', 'mailing_id', 'batch_id', 'address', 'name', 'variables', 'traits', 'status', 'attempts', 'next_attempt_at', 'lease_expires_at', 'lease_token', 'message_id', 'last_response', 'last_error', 'sent_at', 'content', 'created_at', 'updated_at'];
const setDeliveries = db.prepare(\`INSERT INTO mailroom_deliveries (\${COLUMNS.join(', ')})
  SELECT value ->> 0, ?, ?, ?, value ->> 1, value ->> 2, '{}', value ->> 3, 'queued', 0, ?, NULL, 0, value ->> 4, NULL, NULL, NULL, NULL, ?, ?
  FROM jsonb_each(?) WHERE true ON CONFLICT (mailing_id, address) DO NOTHING\`);
const setProfiles = db.prepare(\`INSERT INTO mailroom_profiles (project_id, address, name, traits, status, labels, created_at, updated_at)
  SELECT ?, value ->> 0, value ->> 1, value ->> 2, 'subscribed', value ->> 3, ?, ? FROM jsonb_each(?) WHERE true
  ON CONFLICT (project_id, address) DO NOTHING\`);
const oneDelivery = db.prepare(\`INSERT INTO mailroom_deliveries (\${COLUMNS.join(', ')}) VALUES (\${COLUMNS.map(() => '?').join(', ')}) ON CONFLICT (mailing_id, address) DO NOTHING\`);
const oneProfile = db.prepare('INSERT INTO mailroom_profiles (project_id, address, name, traits, status, labels, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, address) DO NOTHING');
const at = Date.now();
const due = Date.parse('2099-01-01T00:00:00.000Z');
let ms = 0;
let cpuMicros = 0;
for (let start = 0; start < rows; start += pageRows) {
  const end = Math.min(rows, start + pageRows);
  const deliveries = [];
  const profiles = [];
  for (let i = start; i < end; i++) {
    const address = \`user\${i}@example.test\`;
    const traits = JSON.stringify({ firstName: \`First\${i}\`, lastName: \`Last\${i}\`, city: CITIES[i % CITIES.length], plan: \`plan-\${i % 5}\` });
    const id = \`dlv_0123456789abcdefg\${(i + 2).toString(36).padStart(8, '0')}\`;
    deliveries.push([id, address, \`user\${i}\`, traits, \`<\${id}@bench.test>\`]);
    profiles.push([address, null, traits, '["bench"]']);
  }
  const dText = JSON.stringify(deliveries);
  const pText = JSON.stringify(profiles);
  const dParams = deliveries.map(([id, address, name, traits, messageId]) => [id, 'prj_bench', 'mlg_bench', 'src_bench', address, name, '{}', traits, 'queued', 0, due, null, 0, messageId, null, null, null, null, at, at]);
  const pParams = profiles.map(([address, name, traits, labels]) => ['prj_bench', address, name, traits, 'subscribed', labels, at, at]);
  const cpu = process.cpuUsage();
  const t = performance.now();
  db.exec('BEGIN IMMEDIATE');
  if (mode === 'single') {
    for (const p of dParams) oneDelivery.run(p);
    for (const p of pParams) oneProfile.run(p);
  } else {
    setDeliveries.run('prj_bench', 'mlg_bench', 'src_bench', due, at, at, dText);
    if (mode === 'set') setProfiles.run('prj_bench', at, at, pText);
  }
  db.exec('COMMIT');
  ms += performance.now() - t;
  const used = process.cpuUsage(cpu);
  cpuMicros += used.user + used.system;
}
const count = db.prepare('SELECT count(*) AS n FROM mailroom_deliveries').get().n;
if (count !== rows) throw new Error(\`expected \${rows} deliveries, got \${count}\`);
db.close();
for (const f of [dbFile, \`\${dbFile}-wal\`, \`\${dbFile}-shm\`]) rmSync(f, { force: true });
console.log(JSON.stringify({ rowsPerSecond: Math.round(rows / (ms / 1000)), rowsPerCpuSecond: Math.round(rows / (cpuMicros / 1e6)) }));
process.exit(0);
`;

const SOURCES = { engine: ENGINE, store: STORE, raw: RAW } as const;

/** The source of a child, importing the packages from `entries`. */
export function childSource(kind: keyof typeof SOURCES, entries: ChildEntries): string {
  return SOURCES[kind]
    .replace("'@core'", JSON.stringify(entries.core))
    .replace("'@memory'", JSON.stringify(entries.memory))
    .replace("'@sql'", JSON.stringify(entries.sql));
}
