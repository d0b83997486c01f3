/**
 * Issue 17: delivery with open and click tracking on, against the same delivery with it off, in the same
 * run. Each run delivers the `delivery-broadcast` newsletter (an MJML template with nine tracked links,
 * one of them with Liquid in its href, and a pixel) to BENCH_RECIPIENTS recipients through
 * `support/delivery-run.ts`, once with `tracking` off and once on (BENCH_TRACKING=1), the order alternating
 * between runs. The target: tracking on within 10 % of tracking off (median messages/s).
 *
 * Environment: BENCH_RECIPIENTS (50000), BENCH_RUNS (3), BENCH_THREADS (0), BENCH_BATCH (500).
 */
import { runDeliveryChild } from './support/delivery-child.js';
import { median, peakRssMiB, report } from './support/measure.js';
import { type SinkProcess, startSinkProcess } from './support/sink-process.js';

const N = Number(process.env.BENCH_RECIPIENTS ?? 50_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const THREADS = Number(process.env.BENCH_THREADS ?? 0);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);

interface RunResult {
  perSecond: number;
  deliverSeconds: number;
  cpuMicrosPerMessage: number;
  mainThreadCpuMicrosPerMessage: number;
  peakRssMiB: number;
}

/** One delivery run in its own process, tracking on or off. */
async function run(sink: SinkProcess, tracking: boolean): Promise<RunResult> {
  await sink.reset();
  const result = await runDeliveryChild<RunResult>([sink.port, N, THREADS, BATCH], {
    BENCH_TRACKING: tracking ? '1' : '0',
  });
  const got = await sink.count();
  if (got !== N) throw new Error(`the sink got ${got} of ${N}`);
  return result;
}

const sink = await startSinkProcess();
try {
  const off: RunResult[] = [];
  const on: RunResult[] = [];
  for (let r = 0; r < RUNS; r++) {
    // Alternate which goes first, so a drift of the machine's load does not favour one side.
    for (const tracking of r % 2 === 0 ? [false, true] : [true, false]) {
      const result = await run(sink, tracking);
      (tracking ? on : off).push(result);
      console.log(`run ${r + 1} tracking ${tracking ? 'on' : 'off'}: ${JSON.stringify(result)}`);
    }
  }
  const offMedian = median(off.map((r) => r.perSecond));
  const onMedian = median(on.map((r) => r.perSecond));
  const side = (runs: RunResult[]) => ({
    runs: runs.map((r) => r.perSecond),
    median: median(runs.map((r) => r.perSecond)),
    cpuMicrosPerMessage: runs.map((r) => r.cpuMicrosPerMessage),
    mainThreadCpuMicrosPerMessage: runs.map((r) => r.mainThreadCpuMicrosPerMessage),
    peakRssMiB: runs.map((r) => r.peakRssMiB),
  });
  report('delivery-tracking', {
    unit: 'messages/s',
    recipients: N,
    renderThreads: THREADS,
    batchSize: BATCH,
    trackingOff: side(off),
    trackingOn: side(on),
    ratioOnToOff: +(onMedian / offMedian).toFixed(3),
    ratiosPerRun: on.map((r, i) => +(r.perSecond / (off[i] as RunResult).perSecond).toFixed(3)),
    benchProcessPeakRssMiB: peakRssMiB(),
  });
} finally {
  await sink.close();
}
