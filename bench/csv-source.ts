/**
 * Issue 6: a CSV file source becoming deliveries. A 1,000,000-row CSV (about 60 MB, generated into a temp
 * dir) is served by a loopback HTTP host that honours byte ranges; a broadcast with that CSV source is
 * accepted (probe included) and the worker expands it into deliveries and profiles in a SQLite file. The
 * broadcast is scheduled far ahead, so this measures expansion, not sending. papaparse alone on the same
 * file (a utf8 read stream, header row, a step per row) is the reference, measured in the same run.
 * Each engine run is a child process of its own (the range server stays here), so the peak RSS it
 * reports is the engine's alone. Targets: >= 100,000 rows/s on SQLite, peak RSS < 200 MB.
 *
 * Run: npx tsx --conditions=mailroom-source bench/csv-source.ts   (BENCH_CSV_ROWS, BENCH_RUNS to change)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import type PapaType from 'papaparse';
import { median, peakRssMiB, report } from './support/measure.js';

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

/** One engine run, in a child process of its own, so its peak RSS is its own. */
async function engineRun(dir: string, url: string, allow: string, run: number) {
  const dbFile = join(dir, `bench-${run}.db`);
  const mailroom = createMailroom({
    store: sqlStore({ url: dbFile }),
    transport: memoryTransport(),
    fetch: { allowHosts: [allow], rangeBytes: RANGE_BYTES },
  });
  const { project, secret } = await mailroom.admin.createProject({ name: 'bench' });
  await mailroom.admin.addSender(project.id, { address: 'news@bench.test' });
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const { ref } = await mailroom.broadcast(secret, {
    subject: 'Hi {{ profile.firstName }}',
    sender: 'news@bench.test',
    message: '<p>Hello {{ profile.firstName }} from {{ profile.city }}</p>',
    sources: [{ type: 'CSV', config: { label: 'bench', url, columnMappings: { email: 'address' } } }],
    options: { scheduleFor: '2099-01-01T00:00:00.000Z' },
  });
  await mailroom.worker.drain();
  const seconds = (performance.now() - started) / 1000;
  const view = await mailroom.getMailing(secret, ref);
  if (view.counts.queued !== ROWS) throw new Error(`expected ${ROWS} deliveries, got ${view.counts.queued}`);
  await mailroom.close();
  for (const f of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`]) rmSync(f, { force: true });
  return {
    rowsPerSecond: Math.round(ROWS / seconds),
    seconds: +seconds.toFixed(2),
    rssBeforeMiB: Math.round(rssBefore / 2 ** 20),
    peakRssMiB: peakRssMiB(),
  };
}

// Asynchronous on purpose: the range server lives in this process and must keep serving meanwhile.
async function engineInChildAsync(dir: string, url: string, allow: string, run: number) {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
    env: { ...process.env, CSV_BENCH_CHILD: JSON.stringify({ dir, url, allow, run }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    out += text;
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  const line = out.trim().split('\n').at(-1) ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`engine run failed (${code}): ${out}`);
  return JSON.parse(line) as Awaited<ReturnType<typeof engineRun>>;
}

const childArgs = process.env.CSV_BENCH_CHILD;
if (childArgs !== undefined) {
  const { dir, url, allow, run } = JSON.parse(childArgs) as {
    dir: string;
    url: string;
    allow: string;
    run: number;
  };
  console.log(JSON.stringify(await engineRun(dir, url, allow, run)));
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-csv-'));
const csv = join(dir, 'recipients.csv');
const size = await writeCsv(csv);
const { server, port } = await rangeServer(csv, size);
const url = `http://127.0.0.1:${port}/recipients.csv`;
try {
  const papa: number[] = [];
  const engine: Array<Awaited<ReturnType<typeof engineRun>>> = [];
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
    papaparseRowsPerSecond: papaMedian,
    ratioToPapaparse: +(engineMedian / papaMedian).toFixed(2),
    engineRuns: engine,
    enginePeakRssMiB: median(engine.map((e) => e.peakRssMiB)),
    target: { rowsPerSecond: 100_000, peakRssMiB: 200 },
  });
} finally {
  server.closeAllConnections();
  server.close();
  rmSync(dir, { recursive: true, force: true });
}
