/**
 * Issue 5: `mailroom serve` under load. The server runs in its own process (SQLite file, outbox, no
 * in-process worker: this measures accepting, and a separate `mailroom worker` delivers in production);
 * autocannon generates the load from this process over loopback.
 * Targets: 250-recipient broadcast batches at >= 40,000 recipients/s; single sends at 200 requests/s
 * with a p99 latency under 20 ms.
 *
 * Issue 26, phase `status`: list and status reads while a broadcast is sending. `mailroom serve` on its
 * defaults (SQLite, its in-process worker) delivers a BENCH_STATUS_RECIPIENTS (100,000) newsletter
 * broadcast to an SMTP sink in its own process, fed over HTTP, once with status reads beside it
 * (`support/status-reader.ts`: ~33 reads/s of `GET /broadcasts/:ref`, `GET /broadcasts`, `GET
 * /messages/:ref`) and once without, the order alternating between rounds. Targets: the reads' p99 under
 * 50 ms, the sending rate with the reads within 5 % of the rate without them.
 *
 * BENCH_HTTP_PHASES selects phases (default `accept,status`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { median, report } from './support/measure.js';
import { serveRun } from './support/serve-run.js';
import { type SinkProcess, startSinkProcess } from './support/sink-process.js';
import { type StatusReader, type StatusReadFigures, startStatusReader } from './support/status-reader.js';
import { corpusTemplate } from './templates/index.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const PHASES = new Set((process.env.BENCH_HTTP_PHASES ?? 'accept,status').split(','));
const STATUS_N = Number(process.env.BENCH_STATUS_RECIPIENTS ?? 100_000);

interface Server {
  url: string;
  secret: string;
  child: ChildProcess;
  dir: string;
}

async function startServer(): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-serve-'));
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--conditions=mailroom-source',
      'packages/cli/src/bin.ts',
      'serve',
      '--port',
      '0',
      '--database',
      join(dir, 'mailroom.db'),
      '--outbox',
      join(dir, 'outbox'),
      '--no-worker',
      '--no-dashboard',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, MAILROOM_LOG_LEVEL: 'silent' } },
  );
  let out = '';
  const found = await new Promise<{ url: string; secret: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 60_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /listening on (http:\/\/[^\s]+)/.exec(out)?.[1];
      const secret = /(sk_live_[A-Za-z0-9_-]+)/.exec(out)?.[1];
      if (url && secret) {
        clearTimeout(timer);
        resolve({ url, secret });
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
  });
  return { ...found, child, dir };
}

async function stopServer(server: Server): Promise<void> {
  const exited = new Promise((r) => server.child.once('exit', r));
  server.child.kill('SIGTERM');
  await exited;
  rmSync(server.dir, { recursive: true, force: true });
}

function headers(secret: string): Record<string, string> {
  return { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
}

/** Later batches of 250 new recipients each to one broadcast, as fast as the server takes them. */
async function batches(
  server: Server,
): Promise<{ recipientsPerSecond: number; p99: number; errors: number }> {
  const first = await fetch(`${server.url}/send/mail/broadcast`, {
    method: 'POST',
    headers: headers(server.secret),
    body: JSON.stringify({
      subject: 'Hi {{ recipient.firstName }}',
      sender: 'demo@mailroom.local',
      message: '<p>Hello {{ code }}</p>',
      recipients: [{ address: 'first@example.test' }],
    }),
  });
  const ref = ((await first.json()) as { data: { broadcastRef: string } }).data.broadcastRef;
  let n = 0;
  const result = await autocannon({
    url: `${server.url}/send/mail/broadcast`,
    connections: 8,
    duration: SECONDS,
    requests: [
      {
        method: 'POST',
        headers: headers(server.secret),
        setupRequest: (req) => {
          const base = n++ * 250;
          const recipients = Array.from({ length: 250 }, (_, i) => ({
            address: `u${base + i}@example.test`,
            name: `User ${base + i}`,
            variables: { code: `C${i}` },
          }));
          return { ...req, body: JSON.stringify({ broadcastRef: ref, recipients }) };
        },
      },
    ],
  });
  const ok = result['2xx'];
  return {
    recipientsPerSecond: Math.round((ok * 250) / SECONDS),
    p99: result.latency.p99,
    errors: result.non2xx + result.errors,
  };
}

/**
 * Single sends at 200 requests/s after a warm-up at the same rate. autocannon's rate is bursty: each
 * connection sends its share of the second back to back at the start of the second, and latencies are
 * corrected for coordinated omission with a 1 ms expected interval, so one slow response of N ms
 * counts about N times: the p99 is sensitive to any pause of the server.
 */
async function singles(server: Server): Promise<{ p50: number; p99: number; rps: number; errors: number }> {
  let n = 0;
  // `warmup` is autocannon's (lib/init.js) but missing from @types/autocannon.
  const options: autocannon.Options & { warmup: { connections: number; duration: number } } = {
    url: `${server.url}/send/mail`,
    connections: 10,
    overallRate: 200,
    duration: SECONDS,
    // Not counted: the first requests compile the single-send path (JIT, the message's Liquid).
    warmup: { connections: 10, duration: WARMUP_SECONDS },
    requests: [
      {
        method: 'POST',
        headers: headers(server.secret),
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({
            subject: 'Receipt {{ recipient.firstName }}',
            sender: 'demo@mailroom.local',
            message: '<p>Thanks</p>',
            recipients: [{ address: `s${n++}@example.test`, name: 'Sam Single' }],
          }),
        }),
      },
    ],
  };
  const result = await autocannon(options);
  return {
    p50: result.latency.p50,
    p99: result.latency.p99,
    rps: Math.round(result.requests.average),
    errors: result.non2xx + result.errors,
  };
}

/** One delivery of the status phase: messages/s until the sink had all, and the reads' figures. */
async function statusRound(
  sink: SinkProcess,
  withReads: boolean,
): Promise<{ perSecond: number; reads?: StatusReadFigures }> {
  let reader: StatusReader | undefined;
  const result = await serveRun(sink, corpusTemplate('newsletter'), STATUS_N, {
    ...(withReads
      ? {
          during: (call) => {
            reader = startStatusReader(call);
            return reader;
          },
        }
      : {}),
  });
  const reads = reader?.figures();
  if (reads && reads.errors > 0) throw new Error(`status reads failed: ${reads.firstError}`);
  return { perSecond: result.perSecond, ...(reads ? { reads } : {}) };
}

if (PHASES.has('accept')) {
  const batchRuns: Array<Awaited<ReturnType<typeof batches>>> = [];
  const singleRuns: Array<Awaited<ReturnType<typeof singles>>> = [];
  for (let r = 0; r < RUNS; r++) {
    const server = await startServer();
    try {
      batchRuns.push(await batches(server));
      singleRuns.push(await singles(server));
    } finally {
      await stopServer(server);
    }
    console.log(`run ${r + 1}:`, JSON.stringify({ batches: batchRuns.at(-1), singles: singleRuns.at(-1) }));
  }
  report('http-serve', {
    seconds: SECONDS,
    batches: {
      recipientsPerSecond: median(batchRuns.map((b) => b.recipientsPerSecond)),
      runs: batchRuns,
      target: 40_000,
    },
    singles: {
      p99Ms: median(singleRuns.map((s) => s.p99)),
      p50Ms: median(singleRuns.map((s) => s.p50)),
      runs: singleRuns,
      targetP99Ms: 20,
    },
  });
}

if (PHASES.has('status')) {
  const sink = await startSinkProcess();
  const rounds: Array<{ without: number; with: number; ratio: number; reads: StatusReadFigures }> = [];
  try {
    for (let r = 0; r < RUNS; r++) {
      // Alternate the order, so that a drift of the machine's load favours neither.
      const order = r % 2 === 0 ? [false, true] : [true, false];
      const got: Record<string, Awaited<ReturnType<typeof statusRound>>> = {};
      for (const withReads of order) got[String(withReads)] = await statusRound(sink, withReads);
      const without = got.false?.perSecond ?? 0;
      const withReads = got.true?.perSecond ?? 0;
      const reads = got.true?.reads as StatusReadFigures;
      rounds.push({ without, with: withReads, ratio: +(withReads / without).toFixed(3), reads });
      console.log(`status round ${r + 1}:`, JSON.stringify(rounds.at(-1)));
    }
  } finally {
    await sink.close();
  }
  report('http-serve-status', {
    recipients: STATUS_N,
    perSecondWithout: median(rounds.map((r) => r.without)),
    perSecondWith: median(rounds.map((r) => r.with)),
    ratioMedian: median(rounds.map((r) => r.ratio)),
    readsP99Ms: median(rounds.map((r) => r.reads.p99Ms)),
    readsP50Ms: median(rounds.map((r) => r.reads.p50Ms)),
    rounds,
    targets: { readsP99Ms: 50, ratioAtLeast: 0.95 },
  });
}
