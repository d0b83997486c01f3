/**
 * Issue 6: a CSV file source becoming deliveries. A 1,000,000-row CSV (about 60 MB, generated into a temp
 * dir) is served by a loopback HTTP host that honours byte ranges; a broadcast with that CSV source is
 * accepted (probe included) and the worker expands it into deliveries and profiles in a SQLite file. The
 * broadcast is scheduled far ahead, so this measures expansion, not sending. papaparse alone on the same
 * file (a utf8 read stream, header row, a step per row) is the reference, measured in the same run.
 * Each engine run is a child process of its own (the range server stays here), so the peak RSS it
 * reports is the engine's process alone: the runtime, the tsx loader (unless BENCH_CSV_RUNTIME=dist), the
 * modules, SQLite's page cache and the JS heap. `rssBeforeMiB` is that process after setup, before the
 * broadcast; `growthMiB` what the expansion added on top. Targets: >= 100,000 rows/s on SQLite, peak RSS
 * < 200 MB.
 *
 * Run: npx tsx --conditions=mailroom-source bench/csv-source.ts   (BENCH_CSV_ROWS, BENCH_RUNS to change;
 * BENCH_CSV_RUNTIME=dist runs the engine from the built packages under plain node: `pnpm build` first;
 * BENCH_CSV_NODE_FLAGS adds node flags to the engine's process, e.g. a heap cap; BENCH_CSV_SQLITE_CACHE_MIB
 * sets the store's SQLite page cache)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdtempSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type PapaType from 'papaparse';
import { median, report } from './support/measure.js';
import { watchHost } from './support/stores.js';

const ROWS = Number(process.env.BENCH_CSV_ROWS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const RANGE_BYTES = Number(process.env.BENCH_CSV_RANGE_BYTES ?? 1024 * 1024);

// papaparse is a dependency of the core package, not of the workspace root.
const Papa = createRequire(new URL('../packages/core/package.json', import.meta.url))(
  'papaparse',
) as typeof PapaType;

const CITIES = ['Zürich', 'Kraków', 'Lisboa', 'Montréal', 'Paris', 'Berlin', 'Oslo'];

async function writeCsv(path: string): Promise<number> {
  const out = createWriteStream(path);
  out.write('email,firstName,lastName,city,plan\n');
  let chunk = '';
  for (let i = 0; i < ROWS; i++) {
    chunk += `user${i}@example.test,First${i},Last${i},${CITIES[i % CITIES.length]},plan-${i % 5}\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
  return statSync(path).size;
}

/** A loopback host serving the file with `Range` support, like S3. */
async function rangeServer(path: string, size: number): Promise<{ server: Server; port: number }> {
  const etag = `"bench-${size}"`;
  const server = createServer((req, res) => {
    const match = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (!match) {
      res.writeHead(200, { etag, 'content-length': size });
      createReadStream(path).pipe(res);
      return;
    }
    const first = Number(match[1]);
    const last = Math.min(Number(match[2]), size - 1);
    res.writeHead(206, {
      etag,
      'content-range': `bytes ${first}-${last}/${size}`,
      'content-length': last - first + 1,
    });
    createReadStream(path, { start: first, end: last }).pipe(res);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

async function papaparseAlone(path: string): Promise<number> {
  const started = performance.now();
  let rows = 0;
  await new Promise<void>((resolve, reject) => {
    Papa.parse(createReadStream(path, { encoding: 'utf8' }), {
      header: true,
      step: () => {
        rows++;
      },
      complete: () => resolve(),
      error: reject,
    });
  });
  if (rows !== ROWS) throw new Error(`papaparse read ${rows} rows`);
  return Math.round(ROWS / ((performance.now() - started) / 1000));
}

/**
 * Where the child imports the engine from: the TypeScript sources (run under the tsx loader this bench
 * runs under) or, with `BENCH_CSV_RUNTIME=dist`, the built packages (after `pnpm build`) under plain
 * node, without the loader.
 */
const RUNTIME = process.env.BENCH_CSV_RUNTIME === 'dist' ? 'dist' : 'tsx';
/** The SQLite page cache of the engine's store, in MiB (`sqliteCacheMiB`); the store's default when unset. */
const SQLITE_CACHE_MIB = process.env.BENCH_CSV_SQLITE_CACHE_MIB
  ? Number(process.env.BENCH_CSV_SQLITE_CACHE_MIB)
  : undefined;
/** Extra node flags for the engine's process (for example a heap cap: `--max-old-space-size=96`). */
const NODE_FLAGS = (process.env.BENCH_CSV_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
const packageEntry = (name: string) =>
  new URL(`../packages/${name}/${RUNTIME === 'dist' ? 'dist/index.js' : 'src/index.ts'}`, import.meta.url)
    .href;

/**
 * One engine run, as the child process runs it: plain JavaScript, so that the very same code runs on the
 * sources under tsx and on the built packages under plain node. It reports the rows/s of the expansion
 * (accept, probe and drain), the RSS after setup (runtime, loader and modules loaded, store open) and the
 * process's peak RSS.
 */
const ENGINE_CHILD = `
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createMailroom } from ${JSON.stringify(packageEntry('core'))};
import { memoryTransport } from ${JSON.stringify(packageEntry('memory'))};
import { sqlStore } from ${JSON.stringify(packageEntry('sql'))};
const { dir, url, allow, run, rows, rangeBytes, sqliteCacheMiB } = JSON.parse(process.env.CSV_BENCH_CHILD);
const dbFile = join(dir, \`bench-\${run}.db\`);
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

interface EngineRun {
  rowsPerSecond: number;
  /** Rows per second of CPU time of the engine's process (all its threads): steadier on a shared host. */
  rowsPerCpuSecond: number;
  seconds: number;
  rssBeforeMiB: number;
  peakRssMiB: number;
  growthMiB: number;
}

// Asynchronous on purpose: the range server lives in this process and must keep serving meanwhile.
async function engineInChildAsync(dir: string, url: string, allow: string, run: number): Promise<EngineRun> {
  const script = join(dir, 'engine-child.mjs');
  writeFileSync(script, ENGINE_CHILD);
  // Under tsx, the child gets this process's loader flags; on the built packages, none.
  const flags = [
    ...(RUNTIME === 'dist' ? [] : [...process.execArgv, '--conditions=mailroom-source']),
    ...NODE_FLAGS,
  ];
  const child = spawn(process.execPath, [...flags, script], {
    env: {
      ...process.env,
      CSV_BENCH_CHILD: JSON.stringify({
        dir,
        url,
        allow,
        run,
        rows: ROWS,
        rangeBytes: RANGE_BYTES,
        sqliteCacheMiB: SQLITE_CACHE_MIB,
      }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    out += text;
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  const line = out.trim().split('\n').at(-1) ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`engine run failed (${code}): ${out}`);
  return JSON.parse(line) as EngineRun;
}

if (RUNTIME === 'dist' && !existsSync(new URL(packageEntry('core')))) {
  throw new Error('BENCH_CSV_RUNTIME=dist runs the built packages: run `pnpm build` first');
}

const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-csv-'));
const csv = join(dir, 'recipients.csv');
const size = await writeCsv(csv);
const { server, port } = await rangeServer(csv, size);
const host = watchHost();
const url = `http://127.0.0.1:${port}/recipients.csv`;
try {
  const papa: number[] = [];
  const engine: EngineRun[] = [];
  for (let run = 0; run < RUNS; run++) {
    papa.push(await papaparseAlone(csv));
    // The server stays in this process; the engine runs in a child while this one serves the ranges.
    engine.push(await engineInChildAsync(dir, url, `127.0.0.1:${port}`, run));
    console.log(`run ${run + 1}: papaparse ${papa.at(-1)} rows/s; engine ${JSON.stringify(engine.at(-1))}`);
  }
  const engineMedian = median(engine.map((e) => e.rowsPerSecond));
  const papaMedian = median(papa);
  report('csv-source', {
    unit: 'rows/s',
    rows: ROWS,
    fileMiB: +(size / 2 ** 20).toFixed(1),
    rangeBytes: RANGE_BYTES,
    sqliteRowsPerSecond: engineMedian,
    sqliteRowsPerCpuSecond: median(engine.map((e) => e.rowsPerCpuSecond)),
    papaparseRowsPerSecond: papaMedian,
    ratioToPapaparse: +(engineMedian / papaMedian).toFixed(2),
    runtime: RUNTIME,
    nodeFlags: NODE_FLAGS,
    sqliteCacheMiB: SQLITE_CACHE_MIB ?? 'default (64)',
    ...host(),
    engineRuns: engine,
    enginePeakRssMiB: median(engine.map((e) => e.peakRssMiB)),
    engineRssBeforeMiB: median(engine.map((e) => e.rssBeforeMiB)),
    engineGrowthMiB: median(engine.map((e) => e.growthMiB)),
    target: { rowsPerSecond: 100_000, peakRssMiB: 200 },
  });
} finally {
  server.closeAllConnections();
  server.close();
  rmSync(dir, { recursive: true, force: true });
}
