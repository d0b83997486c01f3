/**
 * Issue 42, the measurement: what PostgreSQL does per delivery when Mailroom scales out on it, as users
 * run it (`mailroom serve --no-worker` and `mailroom worker` processes on one PostgreSQL schema, fed over
 * HTTP, the corpus newsletter, one loopback SMTP sink in its own process). Read from PostgreSQL's own
 * cumulative statistics of the run's schema (`pg_stat_user_tables`, exact for that schema whatever else
 * the server does): rows inserted, updated (and how many of those were HOT, writing no index entry) and
 * deleted per delivery, index entries written per delivery (inserted and non-HOT updated rows times the
 * table's indexes), and index and sequential scans per delivery; per table and in all. Also the delivery
 * rate and CPU per message of the Mailroom processes, which on a 2-core machine share the cores with
 * PostgreSQL and the sink (so rates here are noisy; the counts are not).
 *
 * Statements and round trips per delivery are counted in the driver (`pg_stat_statements` needs a server
 * restart to load): `support/pg-count.cjs`, preloaded into serve and the workers, counts every query pg
 * sends from the start mark until the process exits, with the round trips per statement shape. The CPU of
 * PostgreSQL per delivery is read from /proc for the run's backends (named by `application_name`),
 * sampled every 200 ms (a backend's last 200 ms before it ends may be missed).
 *
 * Each run also prints one line (stderr): its time and load, the rate, PostgreSQL's and each process's CPU
 * per delivery, the statement shapes, and the server-wide counters per delivery from the first POST until
 * the sink had every message (`pg_stat_wal`: WAL records, full-page images, bytes, writes and syncs;
 * `pg_stat_bgwriter`: checkpoints, buffers written by the checkpointer and by backends; the CPU of the
 * server's own processes): these count other work on the server too, so they say something only on a
 * quiet server, where they tell one run's database work from another's (issue 42's fast third round).
 *
 * Environment: BENCH_RECIPIENTS (10000), BENCH_RUNS (1), BENCH_WORKERS (2), BENCH_TEMPLATES (newsletter).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { processCpuMicros } from './support/cli-process.js';
import { median, report } from './support/measure.js';
import { backendCpu, schemaOf } from './support/pg-backends.js';
import { serveRun } from './support/serve-run.js';
import { startSinkProcess } from './support/sink-process.js';
import { corpusTemplate } from './templates/index.js';

const N = Number(process.env.BENCH_RECIPIENTS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 1);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const TEMPLATE = corpusTemplate(process.env.BENCH_TEMPLATES ?? 'newsletter');

interface TableCounts {
  ins: number;
  upd: number;
  hot: number;
  del: number;
  idxScan: number;
  seqScan: number;
  /** Rows read: fetched by index scans plus read by sequential scans. */
  read: number;
  indexes: number;
}

async function readCounts(url: string): Promise<Map<string, TableCounts>> {
  const admin = new URL(url);
  admin.searchParams.delete('options');
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    // Statistics reach the shared counters when a backend's transaction ends, at most a second later.
    await new Promise((r) => setTimeout(r, 1_500));
    const { rows } = await client.query<{
      relname: string;
      ins: string;
      upd: string;
      hot: string;
      del: string;
      idx: string | null;
      seq: string;
      read: string;
      indexes: string;
    }>(
      `SELECT t.relname, t.n_tup_ins AS ins, t.n_tup_upd AS upd, t.n_tup_hot_upd AS hot, t.n_tup_del AS del,
              t.idx_scan AS idx, t.seq_scan AS seq, coalesce(t.idx_tup_fetch, 0) + t.seq_tup_read AS read,
              (SELECT count(*) FROM pg_index i WHERE i.indrelid = t.relid) AS indexes
         FROM pg_stat_user_tables t WHERE t.schemaname = $1`,
      [schemaOf(url)],
    );
    return new Map(
      rows.map((r) => [
        r.relname,
        {
          ins: Number(r.ins),
          upd: Number(r.upd),
          hot: Number(r.hot),
          del: Number(r.del),
          idxScan: Number(r.idx ?? 0),
          seqScan: Number(r.seq),
          read: Number(r.read),
          indexes: Number(r.indexes),
        },
      ]),
    );
  } finally {
    await client.end();
  }
}

function perDelivery(before: Map<string, TableCounts>, after: Map<string, TableCounts>) {
  const round = (x: number) => +(x / N).toFixed(2);
  const tables: Record<string, Record<string, number>> = {};
  const total = {
    inserted: 0,
    updated: 0,
    hotUpdated: 0,
    deleted: 0,
    indexEntries: 0,
    indexScans: 0,
    seqScans: 0,
    rowsRead: 0,
  };
  for (const [name, a] of after) {
    const b = before.get(name) ?? {
      ins: 0,
      upd: 0,
      hot: 0,
      del: 0,
      idxScan: 0,
      seqScan: 0,
      read: 0,
      indexes: a.indexes,
    };
    const d = {
      inserted: a.ins - b.ins,
      updated: a.upd - b.upd,
      hotUpdated: a.hot - b.hot,
      deleted: a.del - b.del,
      indexScans: a.idxScan - b.idxScan,
      seqScans: a.seqScan - b.seqScan,
      rowsRead: a.read - b.read,
    };
    const indexEntries = (d.inserted + d.updated - d.hotUpdated) * a.indexes;
    if (d.inserted + d.updated + d.deleted + d.indexScans + d.seqScans === 0) continue;
    tables[name] = {
      inserted: round(d.inserted),
      updated: round(d.updated),
      hotUpdated: round(d.hotUpdated),
      deleted: round(d.deleted),
      indexEntries: round(indexEntries),
      indexScans: round(d.indexScans),
      seqScans: round(d.seqScans),
      rowsRead: round(d.rowsRead),
    };
    total.inserted += d.inserted;
    total.updated += d.updated;
    total.hotUpdated += d.hotUpdated;
    total.deleted += d.deleted;
    total.indexEntries += indexEntries;
    total.indexScans += d.indexScans;
    total.seqScans += d.seqScans;
    total.rowsRead += d.rowsRead;
  }
  return {
    total: Object.fromEntries(Object.entries(total).map(([k, v]) => [k, round(v)])),
    tables,
  };
}

interface DriverCounts {
  roundTrips: number;
  statements: number;
  shapes: Record<string, number>;
}

/** The counts `pg-count.cjs` wrote in `dir`, summed over the processes, per delivery; then emptied. */
function driverCounts(dir: string) {
  const sum: DriverCounts = { roundTrips: 0, statements: 0, shapes: {} };
  for (const file of readdirSync(dir)) {
    const c = JSON.parse(readFileSync(join(dir, file), 'utf8')) as DriverCounts;
    sum.roundTrips += c.roundTrips;
    sum.statements += c.statements;
    for (const [shape, n] of Object.entries(c.shapes)) sum.shapes[shape] = (sum.shapes[shape] ?? 0) + n;
    rmSync(join(dir, file));
  }
  const top = Object.entries(sum.shapes)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 20)
    .map(([shape, n]) => ({ perDelivery: +(n / N).toFixed(3), shape }));
  return {
    statements: +(sum.statements / N).toFixed(2),
    roundTrips: +(sum.roundTrips / N).toFixed(2),
    top,
  };
}

/** Server-wide counters (WAL, buffers, checkpoints): other work on the server counts too. */
async function serverCounters(url: string): Promise<Record<string, number>> {
  const admin = new URL(url);
  admin.searchParams.delete('options');
  admin.searchParams.delete('application_name');
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const wal = await client.query(
      'SELECT wal_records, wal_fpi, wal_bytes, wal_buffers_full, wal_write, wal_sync FROM pg_stat_wal',
    );
    const bg = await client.query(
      `SELECT checkpoints_timed + checkpoints_req AS checkpoints, buffers_checkpoint, buffers_clean,
              buffers_backend, buffers_backend_fsync, buffers_alloc FROM pg_stat_bgwriter`,
    );
    const aux = await client.query<{ pid: number; backend_type: string }>(
      "SELECT pid, backend_type FROM pg_stat_activity WHERE backend_type <> 'client backend'",
    );
    let auxCpu = 0;
    for (const { pid } of aux.rows) {
      try {
        auxCpu += processCpuMicros(pid);
      } catch {}
    }
    return Object.fromEntries(
      Object.entries({ ...wal.rows[0], ...bg.rows[0], auxCpuMicros: auxCpu }).map(([k, v]) => [k, Number(v)]),
    );
  } finally {
    await client.end();
  }
}

const countDir = mkdtempSync(join(tmpdir(), 'mailroom-pg-count-'));
process.env.BENCH_PG_COUNT_DIR = countDir;
const sink = await startSinkProcess();
let SERVER_URL: string | undefined;
const results: Array<{
  perSecond: number;
  cpuMicrosPerMessage: number;
  postgresCpuMicrosPerMessage: number;
  driver: ReturnType<typeof driverCounts>;
  perDelivery: ReturnType<typeof perDelivery>;
}> = [];
try {
  for (let run = 0; run < RUNS; run++) {
    let before = new Map<string, TableCounts>();
    let counted: ReturnType<typeof perDelivery> | undefined;
    let backends: ReturnType<typeof backendCpu> | undefined;
    let postgresCpu = 0;
    let postgresWorkersCpu = 0;
    let server0: Record<string, number> = {};
    let serverDelta: Record<string, number> = {};
    const result = await serveRun(sink, TEMPLATE, N, {
      scaleOut: true,
      workers: WORKERS,
      // The backends' CPU is read until the sink has every message, while they still run.
      during: () => ({
        async stop() {
          postgresCpu = (await backends?.stop()) ?? 0;
          postgresWorkersCpu = backends?.workersMicros() ?? 0;
          backends = undefined;
          if (SERVER_URL) {
            const s1 = await serverCounters(SERVER_URL);
            serverDelta = Object.fromEntries(
              Object.entries(s1).map(([k, v]) => [k, +((v - (server0[k] ?? 0)) / N).toFixed(3)]),
            );
          }
        },
      }),
      around: {
        before: async (url) => {
          before = await readCounts(url);
          SERVER_URL = url;
          server0 = await serverCounters(url);
          backends = backendCpu(url);
        },
        after: async (url) => {
          counted = perDelivery(before, await readCounts(url));
        },
      },
    });
    if (!counted) throw new Error('no counts were read');
    const driver = driverCounts(countDir);
    results.push({
      perSecond: result.perSecond,
      cpuMicrosPerMessage: result.cpuMicrosPerMessage,
      postgresCpuMicrosPerMessage: Math.round(postgresCpu / N),
      driver,
      perDelivery: counted,
    });
    console.error(
      `run ${run + 1} (${new Date().toISOString()}, load ${loadavg()[0]?.toFixed(1)}): ${result.perSecond}/s, pg ${Math.round(postgresCpu / N)} us (workers' backends ${Math.round(postgresWorkersCpu / N)}), processes ${JSON.stringify(result.processCpuMicros?.map((c) => Math.round(c / N)))}, ${driver.statements} statements, ${driver.roundTrips} round trips, events read ${counted.tables.mailroom_events?.rowsRead}, feed ${result.feedSeconds}s of ${result.seconds}s, shapes ${JSON.stringify(driver.top.slice(0, 12))}, server per delivery ${JSON.stringify(serverDelta)}`,
    );
  }
} finally {
  await sink.close();
  rmSync(countDir, { recursive: true, force: true });
}
report('pg-cost', {
  recipients: N,
  workers: WORKERS,
  template: TEMPLATE.ref,
  perSecond: median(results.map((r) => r.perSecond)),
  cpuMicrosPerMessage: median(results.map((r) => r.cpuMicrosPerMessage)),
  postgresCpuMicrosPerMessage: median(results.map((r) => r.postgresCpuMicrosPerMessage)),
  statements: median(results.map((r) => r.driver.statements)),
  roundTrips: median(results.map((r) => r.driver.roundTrips)),
  perDelivery: results.at(-1)?.perDelivery,
  statementShapes: results.at(-1)?.driver.top,
});
