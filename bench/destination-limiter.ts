/**
 * Issue 31: the shared limiter (`DestinationLimitStore.takeTokens`) on PostgreSQL with two worker
 * processes, each with `BENCH_TAKERS` takers in a loop (as a worker's destination gate asks: one token
 * per call, the waiting sends of a destination coalesced into one call in a real worker, so this is the
 * worst case of one call per send). Scenarios, each `BENCH_SECONDS` long, `BENCH_RUNS` times:
 *
 * - `one-key-open`: every taker on one destination whose limit never binds (the most contention);
 * - `eight-keys-open`: the takers spread over eight destinations (a broadcast to many providers);
 * - `one-key-binding`: one destination limited to 200 a second: grants/s must stay at or under it;
 * - `one-key-coalesced`: as a worker's gate asks: one call in flight per destination and process, for
 *   every send waiting (here `BENCH_TAKERS` tokens per call).
 *
 * Figures: grants/s and calls/s (both processes together), per scenario, with medians; the machine's load.
 * Environment: MAILROOM_BENCH_POSTGRES_URL, BENCH_RUNS (3), BENCH_SECONDS (4), BENCH_TAKERS (8).
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { sqlStore } from '@mailroom/sql';
import pg from 'pg';
import { median, report } from './support/measure.js';

const PG = process.env.MAILROOM_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const TAKERS = Number(process.env.BENCH_TAKERS ?? 8);
const WORKERS = 2;
const SCENARIOS = {
  'one-key-open': { keys: 1, perSecond: 1_000_000_000, takers: TAKERS, count: 1 },
  'eight-keys-open': { keys: 8, perSecond: 1_000_000_000, takers: TAKERS, count: 1 },
  'one-key-binding': { keys: 1, perSecond: 200, takers: TAKERS, count: 1 },
  'one-key-coalesced': { keys: 1, perSecond: 1_000_000_000, takers: 1, count: TAKERS },
} as const;
type Scenario = keyof typeof SCENARIOS;

/**
 * A worker process: opens its store, prints `ready`, waits for `go` on stdin, takes tokens for
 * `SECONDS`, prints `{ calls, grants }`.
 */
async function child(url: string, scenario: Scenario, prefix: string): Promise<void> {
  const { keys, perSecond, takers, count } = SCENARIOS[scenario];
  const store = sqlStore({ url, poolSize: TAKERS });
  await store.init();
  // Warm every connection of the pool before the clock starts.
  await Promise.all(
    Array.from({ length: TAKERS }, (_, t) =>
      store.takeTokens({
        key: `warm:${prefix}-${t}`,
        count: 1,
        windows: [{ windowMs: 1_000, limit: 1 }],
        now: new Date(),
      }),
    ),
  );
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  const until = Date.now() + SECONDS * 1_000;
  let calls = 0;
  let grants = 0;
  await Promise.all(
    Array.from({ length: takers }, async (_, t) => {
      for (let i = t; Date.now() < until; i++) {
        const { granted } = await store.takeTokens({
          key: `dest:${prefix}-${i % keys}`,
          count,
          windows: [{ windowMs: 1_000, limit: perSecond }],
          now: new Date(),
        });
        calls++;
        grants += granted;
      }
    }),
  );
  await store.close();
  process.stdout.write(`${JSON.stringify({ calls, grants })}\n`);
}

async function run(url: string, scenario: Scenario, n: number) {
  const children = Array.from({ length: WORKERS }, () => {
    const proc = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--conditions=mailroom-source',
        fileURLToPath(import.meta.url),
        'child',
        url,
        scenario,
        `${scenario}-${n}`,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    let out = '';
    let onReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      onReady = resolve;
    });
    proc.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('ready\n')) onReady();
    });
    const done = new Promise<{ calls: number; grants: number }>((resolve, reject) =>
      proc.once('exit', (code) =>
        code === 0
          ? resolve(JSON.parse(out.replace('ready\n', '').trim()))
          : reject(new Error(`child exited ${code}`)),
      ),
    );
    return { proc, ready, done };
  });
  // Both take together: each starts its clock on the same `go`.
  await Promise.all(children.map((c) => c.ready));
  for (const c of children) c.proc.stdin.end('go\n');
  const outputs = await Promise.all(children.map((c) => c.done));
  const calls = outputs.reduce((s, o) => s + o.calls, 0);
  const grants = outputs.reduce((s, o) => s + o.grants, 0);
  return { grantsPerSecond: Math.round(grants / SECONDS), callsPerSecond: Math.round(calls / SECONDS) };
}

if (process.argv[2] === 'child') {
  const [, , , url, scenario, prefix] = process.argv;
  await child(url as string, scenario as Scenario, prefix as string);
} else {
  const schema = `bench_limits_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: PG });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  const url = new URL(PG);
  url.searchParams.set('options', `-c search_path=${schema}`);
  try {
    const store = sqlStore({ url: url.toString() });
    await store.init();
    await store.close();
    const loadBefore = loadavg()[0] ?? 0;
    const results: Record<string, Array<{ grantsPerSecond: number; callsPerSecond: number }>> = {};
    for (let n = 0; n < RUNS; n++) {
      for (const scenario of Object.keys(SCENARIOS) as Scenario[]) {
        const r = await run(url.toString(), scenario, n);
        results[scenario] = [...(results[scenario] ?? []), r];
        console.log(`run ${n + 1} ${scenario}: ${JSON.stringify(r)}`);
      }
    }
    report('destination-limiter', {
      store: 'postgres',
      workers: WORKERS,
      takersPerWorker: TAKERS,
      seconds: SECONDS,
      ...Object.fromEntries(
        Object.entries(results).map(([scenario, runs]) => [
          scenario,
          {
            grantsPerSecond: median(runs.map((r) => r.grantsPerSecond)),
            callsPerSecond: median(runs.map((r) => r.callsPerSecond)),
            runs: runs.map((r) => r.grantsPerSecond),
          },
        ]),
      ),
      loadAverage: [loadBefore, loadavg()[0] ?? 0].map((l) => +l.toFixed(2)),
    });
  } finally {
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  }
}
