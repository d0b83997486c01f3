/**
 * Issue 38: what a topic costs a broadcast, and the preference centre under load.
 *
 * - Topic vs group (same run, alternated): a topic broadcast to a group of BENCH_CONTACTS (100,000)
 *   contacts of whom every other one is subscribed to the opt-in topic, against a group broadcast to a group
 *   of exactly those 50,000. Both on a fresh SQLite file, one worker, `smtpTransport` (5 connections) to a
 *   loopback sink in its own process, the newsletter MJML template; timed from `worker.start()` (the worker
 *   expands the source) to completion. Target: the topic run within 5 % of the group run.
 * - Preference page under load: the topic run again, with the engine's default worker settings, while a
 *   client in a process of its own GETs a contact's preference page BENCH_PAGE_RATE (20) times a second
 *   from the same server; p50/p99 of the pages while the broadcast sends, and for 4 s before it (idle: what
 *   the machine's own load gives). Target: p99 < 50 ms.
 *
 * Environment: BENCH_CONTACTS (100000), BENCH_RUNS (3), BENCH_PAGE_RATE (20; 0 skips the page run).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median, report } from './support/measure.js';
import { type SinkProcess, startSinkProcess } from './support/sink-process.js';

const N = Number(process.env.BENCH_CONTACTS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const PAGE_RATE = Number(process.env.BENCH_PAGE_RATE ?? 20);

interface RunResult {
  mode: 'topic' | 'group';
  sent: number;
  seconds: number;
  perSecond: number;
  cpuMicrosPerMessage: number;
  mainThreadCpuMicrosPerMessage: number;
  /** The preference page while the broadcast sent, and before it (idle), from a client process. */
  pages?: PageFigures;
  idlePages?: PageFigures;
}

interface PageFigures {
  pages: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

async function run(sink: SinkProcess, mode: 'topic' | 'group', pageRate = 0): Promise<RunResult> {
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
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, BENCH_PAGE_LOAD: String(pageRate) } },
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
  const pages = PAGE_RATE > 0 ? await run(sink, 'topic', PAGE_RATE) : undefined;
  if (pages) console.log(`pages under load: ${JSON.stringify(pages)}`);
  const topicMedian = median(topic.map((r) => r.perSecond));
  const groupMedian = median(group.map((r) => r.perSecond));
  report('topic-broadcast', {
    unit: 'messages/s',
    contacts: N,
    recipients: Math.ceil(N / 2),
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
    ...(pages
      ? {
          preferencePage: {
            ratePerSecond: PAGE_RATE,
            whileSending: pages.pages,
            idle: pages.idlePages,
            broadcastPerSecond: pages.perSecond,
          },
        }
      : {}),
  });
} finally {
  await sink.close();
}
