/**
 * Issue 41: `POST /send/mail/batch` under load while the worker sends. `mailroom serve` on its defaults
 * (SQLite, its in-process worker) relays to an SMTP sink in its own process; autocannon posts batches of
 * 100 distinct messages (one recipient each, their own variables) for BENCH_SECONDS, and the worker sends
 * them in the same run. Reported: messages accepted per second, the p99 latency per request, how many the
 * sink had when the load stopped (the worker was sending meanwhile), and the time until it had them all.
 * Targets: >= 1,000 messages/s accepted, p99 < 200 ms per request.
 *
 * Each round has two phases, each on a fresh database: `full` (as fast as the clients can post) and `paced`
 * (BENCH_PACED_RATE requests/s over all clients, default 12: 1,200 messages/s, for BENCH_PACED_SECONDS,
 * default 20): at a rate the worker can follow, whether it does, i.e. the sink's count when the load stops
 * against what was accepted.
 *
 * BENCH_BATCH_CONNECTIONS: concurrent clients (default 4). BENCH_RUNS rounds (default 3). BENCH_PHASES:
 * `full,paced` (default), or one of them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import autocannon from 'autocannon';
import { startCli } from './support/cli-process.js';
import { median, report } from './support/measure.js';
import { untilSinkHas } from './support/serve-run.js';
import { startSinkProcess } from './support/sink-process.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_BATCH_CONNECTIONS ?? 4);
const PACED_RATE = Number(process.env.BENCH_PACED_RATE ?? 12);
const PACED_SECONDS = Number(process.env.BENCH_PACED_SECONDS ?? 20);
const PHASES = (process.env.BENCH_PHASES ?? 'full,paced').split(',');
const ITEMS = 100;
const SENDER = 'receipts@example.com';

interface Round {
  messagesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  accepted: number;
  /** Messages at the sink when the load stopped: the worker sent them while batches came in. */
  sentDuringLoad: number;
  /** Seconds from the end of the load until the sink had every accepted message. */
  drainSeconds: number;
  /** CPU of serve per accepted and sent message, microseconds. */
  cpuMicrosPerMessage: number;
}

/** The body of request `n`: 100 receipts, each to its own address with its own variables. */
function batchBody(n: number): string {
  const items = Array.from({ length: ITEMS }, (_, i) => {
    const k = n * ITEMS + i;
    return {
      subject: 'Your receipt {{ order }}',
      sender: SENDER,
      message: '<p>Hello {{ recipient.name }}, thank you for order {{ order }}.</p>',
      recipients: [{ address: `c${k}@example.test`, name: `Customer ${k}`, variables: { order: `O-${k}` } }],
      tags: [{ name: 'kind', value: 'receipt' }],
      ...(k % 2 === 0 ? { headers: { 'X-Order': `O-${k}` } } : {}),
    };
  });
  return JSON.stringify({ items, mode: 'partial' });
}

async function seed(url: string): Promise<string> {
  const mailroom = createMailroom({ store: sqlStore({ url }), transport: memoryTransport() });
  try {
    const { project, secret } = await mailroom.admin.createProject({ name: 'Bench' });
    await mailroom.admin.addSender(project.id, { address: SENDER, name: 'Receipts' });
    return secret;
  } finally {
    await mailroom.close();
  }
}

/** One phase on a fresh database: as fast as the clients go, or at `rate` requests/s over them all. */
async function round(
  sinkPort: number,
  sink: Awaited<ReturnType<typeof startSinkProcess>>,
  rate?: number,
): Promise<Round> {
  const seconds = rate === undefined ? SECONDS : PACED_SECONDS;
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-batch-'));
  const url = join(dir, 'mailroom.db');
  const secret = await seed(url);
  const serve = await startCli([
    'serve',
    '--port',
    '0',
    '--database',
    url,
    '--smtp',
    `smtp://127.0.0.1:${sinkPort}`,
    '--no-dashboard',
  ]);
  try {
    await sink.reset();
    const cpu0 = serve.cpuMicros();
    let n = 0;
    const result = await autocannon({
      url: `${serve.url}/send/mail/batch`,
      connections: CONNECTIONS,
      duration: seconds,
      ...(rate === undefined ? {} : { overallRate: rate }),
      requests: [
        {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          setupRequest: (req) => ({ ...req, body: batchBody(n++) }),
        },
      ],
    });
    const accepted = result['2xx'] * ITEMS;
    const sentDuringLoad = await sink.count();
    const t0 = performance.now();
    await untilSinkHas(sink, accepted);
    const drainSeconds = (performance.now() - t0) / 1000;
    return {
      messagesPerSecond: Math.round(accepted / seconds),
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      errors: result.non2xx + result.errors,
      accepted,
      sentDuringLoad,
      drainSeconds: +drainSeconds.toFixed(2),
      cpuMicrosPerMessage: Math.round((serve.cpuMicros() - cpu0) / Math.max(1, accepted)),
    };
  } finally {
    await serve.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const sink = await startSinkProcess();
const rounds: Round[] = [];
const paced: Round[] = [];
try {
  for (let r = 0; r < RUNS; r++) {
    if (PHASES.includes('full')) {
      rounds.push(await round(sink.port, sink));
      console.log(`run ${r + 1}, full:`, JSON.stringify(rounds.at(-1)));
    }
    if (PHASES.includes('paced')) {
      paced.push(await round(sink.port, sink, PACED_RATE));
      console.log(`run ${r + 1}, paced:`, JSON.stringify(paced.at(-1)));
    }
  }
} finally {
  await sink.close();
}
report('batch-send', {
  seconds: SECONDS,
  connections: CONNECTIONS,
  itemsPerRequest: ITEMS,
  messagesPerSecond: median(rounds.map((r) => r.messagesPerSecond)),
  p99Ms: median(rounds.map((r) => r.p99Ms)),
  p50Ms: median(rounds.map((r) => r.p50Ms)),
  sentDuringLoad: median(rounds.map((r) => r.sentDuringLoad)),
  runs: rounds,
  paced: {
    requestsPerSecond: PACED_RATE,
    seconds: PACED_SECONDS,
    messagesPerSecond: median(paced.map((r) => r.messagesPerSecond)),
    p99Ms: median(paced.map((r) => r.p99Ms)),
    p50Ms: median(paced.map((r) => r.p50Ms)),
    // Share of what was accepted that was at the sink when the load stopped: the worker kept up.
    sentDuringLoadShare: median(paced.map((r) => +(r.sentDuringLoad / Math.max(1, r.accepted)).toFixed(3))),
    drainSeconds: median(paced.map((r) => r.drainSeconds)),
    runs: paced,
  },
  targets: { messagesPerSecond: 1_000, p99Ms: 200 },
});
