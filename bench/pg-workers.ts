/**
 * Issue 42, workers that add throughput: the corpus newsletter through `mailroom serve --no-worker` and 1,
 * 2 and 4 `mailroom worker` processes on one PostgreSQL schema (a fresh one per run), to a sink in its own
 * process that answers each message 50 ms after it arrived (a real relay answers in tens of
 * milliseconds). Each worker sends over its own SMTP connections (its concurrency, 8 by default), so the
 * relay's latency caps one worker at concurrency / latency messages a second, and more workers should
 * add throughput until the CPU or the database stops them. Reported per worker count: the rate, that
 * cap, and where the time went: the CPU of serve, of the workers, of the run's PostgreSQL backends and of
 * the sink, each as a share of one core over the delivery, and the machine's busy share of its cores
 * (from /proc/stat, every process on it: the cores are shared).
 *
 * Environment: BENCH_RECIPIENTS (3000), BENCH_RUNS (1), BENCH_WORKER_COUNTS (1,2,4), BENCH_SINK_DELAY_MS
 * (50), BENCH_TEMPLATES (newsletter).
 */
import { cpus } from 'node:os';
import { machineTicks } from './support/machine-cpu.js';
import { median, report } from './support/measure.js';
import { backendCpu } from './support/pg-backends.js';
import { serveRun } from './support/serve-run.js';
import { startSinkProcess } from './support/sink-process.js';
import { corpusTemplate } from './templates/index.js';

const N = Number(process.env.BENCH_RECIPIENTS ?? 3_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 1);
const COUNTS = (process.env.BENCH_WORKER_COUNTS ?? '1,2,4').split(',').map(Number);
const DELAY_MS = Number(process.env.BENCH_SINK_DELAY_MS ?? 50);
const TEMPLATE = corpusTemplate(process.env.BENCH_TEMPLATES ?? 'newsletter');
/** The worker's default concurrency (`mailroom worker --concurrency`), which is its SMTP connections. */
const CONCURRENCY = 8;

/** `micros` of CPU over `seconds` of wall time, as a share of one core. */
const cores = (micros: number, seconds: number) => +(micros / 1e6 / seconds).toFixed(2);

interface Row {
  workers: number;
  perSecond: number;
  /** What the relay's latency allows: workers x concurrency / latency. */
  relayCap: number;
  serveCores: number;
  workerCores: number[];
  postgresCores: number;
  sinkCores: number;
  /** The machine's busy share of all its cores during the delivery (every process, not only these). */
  machineBusy: number;
  duplicates: number;
}

const sink = await startSinkProcess('./count-sink.ts', { delayMs: DELAY_MS });
const rows: Row[][] = COUNTS.map(() => []);
try {
  for (let run = 0; run < RUNS; run++) {
    for (const [c, workers] of COUNTS.entries()) {
      let backends: ReturnType<typeof backendCpu> | undefined;
      let postgresCpu = 0;
      let ticks0 = machineTicks();
      let busy = 0;
      const result = await serveRun(sink, TEMPLATE, N, {
        scaleOut: true,
        workers,
        during: () => ({
          async stop() {
            const ticks = machineTicks();
            // Stolen time counted busy: the machine was not free to run this benchmark then.
            busy = (ticks.busy + ticks.steal - ticks0.busy - ticks0.steal) / (ticks.all - ticks0.all);
            postgresCpu = (await backends?.stop()) ?? 0;
            backends = undefined;
          },
        }),
        around: {
          async before(url) {
            backends = backendCpu(url);
            ticks0 = machineTicks();
          },
          async after() {},
        },
      });
      const seconds = result.deliveredSeconds ?? result.seconds;
      const [serveCpu = 0, ...workerCpu] = result.processCpuMicros ?? [];
      const row: Row = {
        workers,
        perSecond: result.perSecond,
        relayCap: Math.round((workers * CONCURRENCY * 1000) / DELAY_MS),
        serveCores: cores(serveCpu, seconds),
        workerCores: workerCpu.map((micros) => cores(micros, seconds)),
        postgresCores: cores(postgresCpu, seconds),
        sinkCores: cores(result.sinkCpuMicrosPerMessage * N, seconds),
        machineBusy: +busy.toFixed(2),
        duplicates: result.duplicates ?? 0,
      };
      rows[c]?.push(row);
      console.error(`run ${run + 1}: ${JSON.stringify(row)}`);
    }
  }
} finally {
  await sink.close();
}
const medians = COUNTS.map((workers, c) => {
  const runs = rows[c] ?? [];
  return { workers, perSecond: median(runs.map((r) => r.perSecond)), runs };
});
const base = medians[0]?.perSecond ?? 0;
report('pg-workers', {
  recipients: N,
  sinkDelayMs: DELAY_MS,
  cores: cpus().length,
  template: TEMPLATE.ref,
  results: medians.map((m) => ({ ...m, speedup: base ? +(m.perSecond / base).toFixed(2) : 0 })),
});
