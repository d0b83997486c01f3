/**
 * Issue 6: a CSV file source becoming deliveries. A 1,000,000-row CSV (about 60 MB, generated into a temp
 * dir) is served by a loopback HTTP host that honours byte ranges; a broadcast with that CSV source is
 * accepted (probe included) and the worker expands it into deliveries and profiles in a SQLite file. The
 * broadcast is scheduled far ahead, so this measures expansion, not sending. Targets: >= 100,000 rows/s
 * on SQLite, peak RSS < 200 MB. Each run, each in a child process of its own (the range server stays
 * here, so a child's RSS is its own):
 * - papaparse alone on the same file (a utf8 read stream, header row, a step per row): the reference;
 * - the engine: rows/s of the expansion, per CPU-second of its process, its RSS after setup
 *   (`rssBeforeMiB`: runtime, modules, store open) and its peak RSS;
 * - the store alone: the same rows as the expander's records, committed page by page with
 *   `commitSourcePage` (rows/s of the commits alone);
 * - the driver alone: better-sqlite3 on the store's schema, the store's set-based statements with their
 *   parameters prepared beforehand (deliveries and profiles, deliveries alone), and a prepared
 *   single-row statement per row (the store's former way).
 *
 * The children run the built packages under plain node (built first when `dist` is missing or older
 * than `src`), as users run them, with the store's `sqliteCacheMiB: 16` and node flags
 * `--max-old-space-size=64 --max-semi-space-size=8`: the settings that hold the engine under 200 MB.
 *
 * Run: npx pnpm@10 bench csv-source. Environment: BENCH_CSV_ROWS (1,000,000), BENCH_RUNS (3),
 * BENCH_CSV_RANGE_BYTES (1 MiB), BENCH_CSV_RUNTIME (`dist`, or `tsx`: the sources under the tsx loader),
 * BENCH_CSV_NODE_FLAGS (node flags of the engine and store children; empty for none),
 * BENCH_CSV_SQLITE_CACHE_MIB (16; 64 is the store's default), BENCH_CSV_FIGURES (`all`, or `engine`:
 * papaparse and the engine only).
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type PapaType from 'papaparse';
import { childSource } from './support/csv-children.js';
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
 * Where the children import the packages from: the built packages under plain node (`dist`, the
 * default: what users run; built first when missing or older than their sources), or the TypeScript
 * sources under the tsx loader this bench runs under (`BENCH_CSV_RUNTIME=tsx`).
 */
const RUNTIME = process.env.BENCH_CSV_RUNTIME === 'tsx' ? 'tsx' : 'dist';
/**
 * The SQLite page cache of the store, in MiB (`sqliteCacheMiB`). 16, not the store's 64: in this file's
 * address order the smaller cache costs nothing measurable, and the 48 MiB it saves are a quarter of the
 * RSS target.
 */
const SQLITE_CACHE_MIB = Number(process.env.BENCH_CSV_SQLITE_CACHE_MIB ?? 16);
/**
 * Node flags of the engine and store children. By default the heap settings a user holding a worker
 * under 200 MB would give node (both are in node's documented "useful V8 options"): without them, V8
 * lets the old generation fill with promoted page records to 100-150 MB before collecting it.
 */
const NODE_FLAGS = (process.env.BENCH_CSV_NODE_FLAGS ?? '--max-old-space-size=64 --max-semi-space-size=8')
  .split(' ')
  .filter((flag) => flag !== '');
/** Rows per page: the CSV expander's default `pageRows`, for the store and driver figures. */
const PAGE_ROWS = 1024;
/** Which figures each run takes besides papaparse and the engine: `all` (default) or `engine`. */
const FIGURES = process.env.BENCH_CSV_FIGURES === 'engine' ? 'engine' : 'all';

const root = new URL('../', import.meta.url);
const BUILT = ['core', 'memory', 'sql'] as const;
const packageEntry = (name: string) =>
  new URL(`packages/${name}/${RUNTIME === 'dist' ? 'dist/index.js' : 'src/index.ts'}`, root).href;
const entries = { core: packageEntry('core'), memory: packageEntry('memory'), sql: packageEntry('sql') };

/** Newest modification time of the files under `dir`, in ms. */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) latest = Math.max(latest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return latest;
}

/** Builds the packages the children import, each only if its `dist` is missing or older than its sources. */
function ensureBuilt(): void {
  const tsup = fileURLToPath(new URL('node_modules/.bin/tsup', root));
  for (const name of BUILT) {
    const dir = fileURLToPath(new URL(`packages/${name}/`, root));
    const built = join(dir, 'dist/index.js');
    if (existsSync(built) && statSync(built).mtimeMs >= newest(join(dir, 'src'))) continue;
    console.log(`building @mailroom/${name} (dist missing or older than src)`);
    const result = spawnSync(tsup, [], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
    if (result.status !== 0) throw new Error(`building @mailroom/${name} failed`);
  }
}

interface EngineRun {
  rowsPerSecond: number;
  /** Rows per second of CPU time of the engine's process (all its threads): steadier on a shared host. */
  rowsPerCpuSecond: number;
  seconds: number;
  rssBeforeMiB: number;
  peakRssMiB: number;
  growthMiB: number;
}

/** A figure of the store or the driver alone: rows/s over the writes only, and per CPU-second of them. */
interface WriteRun {
  rowsPerSecond: number;
  rowsPerCpuSecond: number;
}

// Asynchronous on purpose: the range server lives in this process and must keep serving meanwhile.
async function child<T>(
  kind: 'engine' | 'store' | 'raw',
  dir: string,
  params: Record<string, unknown>,
  flags: string[],
): Promise<T> {
  const script = join(dir, `${kind}-child.mjs`);
  writeFileSync(script, childSource(kind, entries));
  // Under tsx, the child gets this process's loader flags; on the built packages, none.
  const runtimeFlags = RUNTIME === 'dist' ? [] : [...process.execArgv, '--conditions=mailroom-source'];
  const proc = spawn(process.execPath, [...runtimeFlags, ...flags, script], {
    env: {
      ...process.env,
      CSV_BENCH_CHILD: JSON.stringify({
        dir,
        rows: ROWS,
        rangeBytes: RANGE_BYTES,
        sqliteCacheMiB: SQLITE_CACHE_MIB,
        pageRows: PAGE_ROWS,
        sqlPackage: fileURLToPath(new URL('packages/sql/package.json', root)),
        ...params,
      }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  proc.stdout.setEncoding('utf8').on('data', (text: string) => {
    out += text;
  });
  const [code] = (await once(proc, 'exit')) as [number | null];
  const line = out.trim().split('\n').at(-1) ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`${kind} run failed (${code}): ${out}`);
  return JSON.parse(line) as T;
}

if (RUNTIME === 'dist') ensureBuilt();

const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-csv-'));
const csv = join(dir, 'recipients.csv');
const size = await writeCsv(csv);
const { server, port } = await rangeServer(csv, size);
const host = watchHost();
const url = `http://127.0.0.1:${port}/recipients.csv`;
try {
  const papa: number[] = [];
  const engine: EngineRun[] = [];
  const store: WriteRun[] = [];
  const raw: Record<'set' | 'set-deliveries' | 'single', WriteRun[]> = {
    set: [],
    'set-deliveries': [],
    single: [],
  };
  const allow = `127.0.0.1:${port}`;
  for (let run = 0; run < RUNS; run++) {
    papa.push(await papaparseAlone(csv));
    // The server stays in this process; the engine runs in a child while this one serves the ranges.
    engine.push(await child<EngineRun>('engine', dir, { url, allow, run }, NODE_FLAGS));
    console.log(`run ${run + 1}: papaparse ${papa.at(-1)} rows/s; engine ${JSON.stringify(engine.at(-1))}`);
    if (FIGURES === 'engine') continue;
    store.push(await child<WriteRun>('store', dir, { url, allow, run }, NODE_FLAGS));
    for (const mode of ['set', 'set-deliveries', 'single'] as const) {
      raw[mode].push(await child<WriteRun>('raw', dir, { run, mode }, []));
    }
    console.log(
      `run ${run + 1}: store alone ${JSON.stringify(store.at(-1))}; driver alone ${JSON.stringify(
        Object.fromEntries(Object.entries(raw).map(([mode, runs]) => [mode, runs.at(-1)])),
      )}`,
    );
  }
  const engineMedian = median(engine.map((e) => e.rowsPerSecond));
  const papaMedian = median(papa);
  const medians = (runs: WriteRun[]) =>
    runs.length === 0
      ? null
      : {
          rowsPerSecond: median(runs.map((r) => r.rowsPerSecond)),
          rowsPerCpuSecond: median(runs.map((r) => r.rowsPerCpuSecond)),
        };
  report('csv-source', {
    unit: 'rows/s',
    rows: ROWS,
    fileMiB: +(size / 2 ** 20).toFixed(1),
    rangeBytes: RANGE_BYTES,
    sqliteRowsPerSecond: engineMedian,
    sqliteRowsPerCpuSecond: median(engine.map((e) => e.rowsPerCpuSecond)),
    papaparseRowsPerSecond: papaMedian,
    papaparseRuns: papa,
    ratioToPapaparse: +(engineMedian / papaMedian).toFixed(2),
    runtime: RUNTIME,
    nodeFlags: NODE_FLAGS,
    sqliteCacheMiB: SQLITE_CACHE_MIB,
    ...host(),
    engineRuns: engine,
    enginePeakRssMiB: median(engine.map((e) => e.peakRssMiB)),
    engineRssBeforeMiB: median(engine.map((e) => e.rssBeforeMiB)),
    engineGrowthMiB: median(engine.map((e) => e.growthMiB)),
    storeAlone: medians(store),
    driverAlone: {
      set: medians(raw.set),
      setDeliveriesOnly: medians(raw['set-deliveries']),
      singleRowStatements: medians(raw.single),
    },
    target: { rowsPerSecond: 100_000, peakRssMiB: 200 },
  });
} finally {
  server.closeAllConnections();
  server.close();
  rmSync(dir, { recursive: true, force: true });
}
