/**
 * Issue 41: what a local-time broadcast costs the worker, against the same broadcast sent at once.
 *
 * Both sides are `delivery-broadcast`'s run (`support/delivery-run.ts`: the newsletter MJML template with
 * five variables, SQLite, the SMTP transport to a loopback sink in its own process), on a clock that
 * accepts two days in the past and then jumps to now, so that every recipient's 09:00 is due when the
 * worker starts: the time measured is the worker's, without the wait. The recipients are spread over six
 * zones (one a bad name, sent by the fallback). One side sends at once; the other with
 * `options.localTime: { at: '09:00', timezone: 'tz', fallback: 'UTC' }`. Pairs alternate, so that the
 * machine's drift falls on both.
 *
 * Environment: BENCH_RECIPIENTS (100000), BENCH_RUNS (3 pairs), BENCH_THREADS (0), BENCH_BATCH (500).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median, report } from './support/measure.js';
import { type SinkProcess, startSinkProcess } from './support/sink-process.js';

const N = Number(process.env.BENCH_RECIPIENTS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const THREADS = Number(process.env.BENCH_THREADS ?? 0);
const BATCH = Number(process.env.BENCH_BATCH ?? 500);

interface RunResult {
  acceptSeconds: number;
  deliverSeconds: number;
  perSecond: number;
  cpuMicrosPerMessage: number;
  mainThreadCpuMicrosPerMessage: number;
  peakRssMiB: number;
}

async function run(sink: SinkProcess, localTime: boolean): Promise<RunResult> {
  await sink.reset();
  const child = spawn(
    process.execPath,
    [
      '--max-old-space-size=160',
      '--import',
      'tsx',
      '--conditions=mailroom-source',
      fileURLToPath(new URL('./support/delivery-run.ts', import.meta.url)),
      String(sink.port),
      String(N),
      String(THREADS),
      String(BATCH),
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, BENCH_SHIFTED_CLOCK: '1', BENCH_LOCAL_TIME: localTime ? '1' : '0' },
    },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`delivery run failed (${code})`);
  const got = await sink.count();
  if (got !== N) throw new Error(`the sink got ${got} of ${N}`);
  return JSON.parse(out.trim().split('\n').at(-1) as string) as RunResult;
}

const sink = await startSinkProcess();
try {
  const atOnce: RunResult[] = [];
  const local: RunResult[] = [];
  for (let r = 0; r < RUNS; r++) {
    atOnce.push(await run(sink, false));
    local.push(await run(sink, true));
    console.log(
      `pair ${r + 1}: at once ${JSON.stringify(atOnce[r])}; local time ${JSON.stringify(local[r])}`,
    );
  }
  const side = (runs: RunResult[]) => ({
    perSecond: runs.map((r) => r.perSecond),
    medianPerSecond: median(runs.map((r) => r.perSecond)),
    deliverSeconds: runs.map((r) => r.deliverSeconds),
    acceptSeconds: runs.map((r) => r.acceptSeconds),
    cpuMicrosPerMessage: runs.map((r) => r.cpuMicrosPerMessage),
    medianCpuMicrosPerMessage: median(runs.map((r) => r.cpuMicrosPerMessage)),
    mainThreadCpuMicrosPerMessage: runs.map((r) => r.mainThreadCpuMicrosPerMessage),
    peakRssMiB: runs.map((r) => r.peakRssMiB),
  });
  const a = side(atOnce);
  const l = side(local);
  report('local-time', {
    unit: 'messages/s',
    recipients: N,
    zones: 6,
    atOnce: a,
    localTime: l,
    // The acceptance criterion: worker time per message, local time over at once (1.05 = 5 % dearer).
    workerCpuRatio: +(l.medianCpuMicrosPerMessage / a.medianCpuMicrosPerMessage).toFixed(3),
    rateRatio: +(l.medianPerSecond / a.medianPerSecond).toFixed(3),
    rateRatiosPerPair: local.map((r, i) => +(r.perSecond / (atOnce[i] as RunResult).perSecond).toFixed(3)),
    acceptRatio: +(
      median(local.map((r) => r.acceptSeconds)) / median(atOnce.map((r) => r.acceptSeconds))
    ).toFixed(3),
  });
} finally {
  await sink.close();
}
