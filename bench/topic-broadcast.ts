/**
 * Issue 38: what a topic costs a broadcast, and the preference centre under load.
 *
 * - Topic vs group (same run, alternated): a topic broadcast to a group of BENCH_CONTACTS (100,000)
 *   contacts of whom every other one is subscribed to the opt-in topic, against a group broadcast to a group
 *   of exactly those 50,000. Both on a fresh SQLite file, one worker, `smtpTransport` (5 connections) to a
 *   loopback sink in its own process, the newsletter MJML template; timed from `worker.start()` (the worker
 *   expands the source) to completion. Target: the topic run within 5 % of the group run.
 * - Preference page under load (`support/topic-serve-run.ts`): `mailroom serve` on its defaults, the topic
 *   broadcast posted over HTTP, while two clients in processes of their own GET a contact's preference page
 *   and an API route (`GET /audience/profiles/:email/topics`) BENCH_PAGE_RATE (20) times a second each;
 *   p50/p99 while the broadcast sends, and for 4 s before it (idle: what the machine's own load gives), the
 *   server's event-loop delay, and the broadcast's rate. Target: p99 < 50 ms. With BENCH_BASE_BIN (another
 *   tree's built `packages/cli/dist/bin.js`) the runs alternate between that tree (`base`) and this one
 *   (`head`): a before/after in the same run.
 *
 * Environment: BENCH_CONTACTS (100000), BENCH_RUNS (3 topic/group pairs; 0 skips them), BENCH_SERVE_RUNS
 * (2 serve runs per tree; 0 skips them), BENCH_PAGE_RATE (20), BENCH_BASE_BIN (unset).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median, report } from './support/measure.js';
import { type SinkProcess, startSinkProcess } from './support/sink-process.js';
import { type ServeTopicResult, serveTopicRun } from './support/topic-serve-run.js';

const N = Number(process.env.BENCH_CONTACTS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SERVE_RUNS = Number(process.env.BENCH_SERVE_RUNS ?? 2);
const PAGE_RATE = Number(process.env.BENCH_PAGE_RATE ?? 20);
const BASE_BIN = process.env.BENCH_BASE_BIN;

interface RunResult {
  mode: 'topic' | 'group';
  sent: number;
  seconds: number;
  perSecond: number;
  cpuMicrosPerMessage: number;
  mainThreadCpuMicrosPerMessage: number;
}

async function run(sink: SinkProcess, mode: 'topic' | 'group'): Promise<RunResult> {
  await sink.reset();
  const child = spawn(
    process.execPath,
    [
      '--max-old-space-size=256',
      '--import',
      'tsx',
      '--conditions=mailroom-source',
      fileURLToPath(new URL('./support/topic-run.ts', import.meta.url)),
      String(sink.port),
      String(N),
      mode,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${mode} run failed (${code})`);
  const got = await sink.count();
  if (got !== Math.ceil(N / 2)) throw new Error(`${mode}: the sink got ${got} of ${Math.ceil(N / 2)}`);
  return JSON.parse(out.trim().split('\n').at(-1) as string) as RunResult;
}

/** Medians of the serve runs of one tree. */
function serveSummary(runs: ServeTopicResult[]) {
  const m = (f: (r: ServeTopicResult) => number) => +median(runs.map(f)).toFixed(1);
  return {
    runs: runs.length,
    perSecond: runs.map((r) => r.perSecond),
    medianPerSecond: m((r) => r.perSecond),
    cpuMicrosPerMessage: m((r) => r.cpuMicrosPerMessage),
    pageP99Ms: runs.map((r) => r.page.p99Ms),
    medianPageP50Ms: m((r) => r.page.p50Ms),
    medianPageP99Ms: m((r) => r.page.p99Ms),
    apiP99Ms: runs.map((r) => r.api.p99Ms),
    medianApiP99Ms: m((r) => r.api.p99Ms),
    medianIdlePageP99Ms: m((r) => r.idlePage.p99Ms),
    medianIdleApiP99Ms: m((r) => r.idleApi.p99Ms),
    medianLoopP99Ms: m((r) => r.loop.p99Ms),
    loopMaxMs: runs.map((r) => r.loop.maxMs),
  };
}

const sink = await startSinkProcess();
try {
  const topic: RunResult[] = [];
  const group: RunResult[] = [];
  for (let r = 0; r < RUNS; r++) {
    // Alternate which goes first, so a drift of the machine's load falls on both.
    const order: Array<'topic' | 'group'> = r % 2 === 0 ? ['group', 'topic'] : ['topic', 'group'];
    for (const mode of order) {
      const result = await run(sink, mode);
      (mode === 'topic' ? topic : group).push(result);
      console.log(`run ${r + 1} ${mode}: ${JSON.stringify(result)}`);
    }
  }
  const head: ServeTopicResult[] = [];
  const base: ServeTopicResult[] = [];
  for (let r = 0; r < SERVE_RUNS; r++) {
    const order: Array<string | undefined> = BASE_BIN
      ? r % 2 === 0
        ? [BASE_BIN, undefined]
        : [undefined, BASE_BIN]
      : [undefined];
    for (const bin of order) {
      const result = await serveTopicRun(sink, N, PAGE_RATE, bin);
      (bin ? base : head).push(result);
      console.log(`serve run ${r + 1} ${result.tree}: ${JSON.stringify(result)}`);
    }
  }
  const topicMedian = median(topic.map((r) => r.perSecond));
  const groupMedian = median(group.map((r) => r.perSecond));
  report('topic-broadcast', {
    unit: 'messages/s',
    contacts: N,
    recipients: Math.ceil(N / 2),
    ...(RUNS > 0
      ? {
          group: {
            runs: group.map((r) => r.perSecond),
            median: groupMedian,
            seconds: group.map((r) => r.seconds),
            cpuMicrosPerMessage: group.map((r) => r.cpuMicrosPerMessage),
            mainThreadCpuMicrosPerMessage: group.map((r) => r.mainThreadCpuMicrosPerMessage),
          },
          topic: {
            runs: topic.map((r) => r.perSecond),
            median: topicMedian,
            seconds: topic.map((r) => r.seconds),
            cpuMicrosPerMessage: topic.map((r) => r.cpuMicrosPerMessage),
            mainThreadCpuMicrosPerMessage: topic.map((r) => r.mainThreadCpuMicrosPerMessage),
          },
          topicToGroup: +(topicMedian / groupMedian).toFixed(3),
          // CPU per message is what the machine's other load disturbs least: the figure to compare.
          cpuTopicToGroup: +(
            median(topic.map((r) => r.cpuMicrosPerMessage)) / median(group.map((r) => r.cpuMicrosPerMessage))
          ).toFixed(3),
          ratiosPerRun: topic.map((t, i) => +(t.perSecond / (group[i] as RunResult).perSecond).toFixed(3)),
        }
      : {}),
    ...(SERVE_RUNS > 0
      ? {
          serve: {
            ratePerSecond: PAGE_RATE,
            head: serveSummary(head),
            ...(base.length > 0 ? { base: serveSummary(base) } : {}),
          },
        }
      : {}),
  });
} finally {
  await sink.close();
}
