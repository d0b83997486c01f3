/**
 * Issue 18: the corpus templates (bench/templates/) delivered as users run Mailroom, against the stack
 * they would build instead, on one loopback SMTP sink in its own process, in the same run:
 *
 * - **Mailroom:** `mailroom serve` with its default flags but the database file and the relay (`--database
 *   FILE --smtp smtp://127.0.0.1:PORT`), fed over HTTP: `POST /send/mail/broadcast` with the template ref
 *   and 250 recipients with their variables, then the later batches by `broadcastRef`, one request at a
 *   time. Timed from the first POST until the sink has every message.
 * - **Scale-out** (`BENCH_SCALEOUT=1`): the same against PostgreSQL (a fresh schema per run), `mailroom serve
 *   --no-worker` plus two `mailroom worker` processes; the sink counts Message-IDs seen twice.
 * - **BullMQ:** a queue on the local Redis, the same recipients added as jobs in bulk (250 per call) by this
 *   process, and a worker process (`support/bullmq-worker.ts`: liquidjs parsed once, MJML compiled once,
 *   nodemailer pool of 5). Timed from the first add until the sink has every message.
 * - **Loop:** the plain nodemailer loop of `delivery-broadcast` (one pre-rendered message, pool of 5).
 *
 * Figures per stack: messages/s, CPU per message of its processes (and the sink's), peak RSS.
 * Environment: BENCH_RECIPIENTS (100000), BENCH_RUNS (3), BENCH_TEMPLATES (all, or a comma list of refs),
 * BENCH_LOOP (messages of the loop, at most 20000), BENCH_SCALEOUT (0), BENCH_BULLMQ_TEXT (none | convert),
 * BENCH_CPU_PROF (a directory: CPU profiles of the Mailroom processes),
 * BENCH_BULLMQ_CONNECTIONS (5), BENCH_STACKS (mailroom,bullmq,loop; also `alt`: serve again with BENCH_ALT_ARGS, compared in the same run),
 * BENCH_SERVE_ARGS (extra serve flags of the `mailroom` stack, space-separated; none by default),
 * BENCH_ALT_ARGS (extra serve flags of the `alt` stack), BENCH_ALT_SMTP_QUERY (query of its `--smtp` URL),
 * BENCH_ALT_BIN (the `alt` stack runs this built CLI: another checkout's `packages/cli/dist/bin.js`),
 * BENCH_SCALEOUT_ARGS (extra flags of the scale-out's serve and workers, e.g. `--render-threads 0`),
 * BENCH_SCALEOUT_ALT_ARGS (with BENCH_SCALEOUT=1: a second scale-out with these flags in each round, e.g.
 * `--render-threads 1`, compared in the same run).
 *
 * The scale-out also reports its PostgreSQL backends' CPU per message, and `scaleoutByCpu`: per run, what
 * SQLite's `serve` and the sink used per message over what the scale-out, PostgreSQL and the sink used.
 * On a 2-core machine that is CPU-bound (every process here shares the cores), it predicts the ratio of
 * rates; it holds when other work on the machine makes the rates spread.
 */
import { execFileSync, spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import {
  compileTemplate,
  contentFromTemplate,
  prepareContent,
  renderDelivery,
} from '../packages/core/src/render/index.js';
import { processCpuMicros } from './support/cli-process.js';
import { median, report } from './support/measure.js';
import { nodemailerLoop } from './support/nodemailer-loop.js';
import { BATCH, recipients, SENDER, type StackResult, serveRun, untilSinkHas } from './support/serve-run.js';
import { type SinkProcess, startSinkProcess } from './support/sink-process.js';
import { CORPUS, type CorpusTemplate, corpusTemplate } from './templates/index.js';

const N = Number(process.env.BENCH_RECIPIENTS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const LOOP_N = Math.min(N, Number(process.env.BENCH_LOOP ?? 20_000));
const SCALEOUT = process.env.BENCH_SCALEOUT === '1';
const BULLMQ_TEXT = process.env.BENCH_BULLMQ_TEXT === 'convert' ? 'convert' : 'none';
const STACKS = new Set((process.env.BENCH_STACKS ?? 'mailroom,bullmq,loop').split(','));
const flagsOf = (text: string | undefined) => (text ?? '').split(/\s+/).filter((a) => a !== '');
const SERVE_ARGS = flagsOf(process.env.BENCH_SERVE_ARGS);
const ALT_ARGS = flagsOf(process.env.BENCH_ALT_ARGS);
/** BENCH_ALT_BIN: the `alt` stack runs this built CLI (`.../packages/cli/dist/bin.js` of another checkout). */
const ALT_BIN = process.env.BENCH_ALT_BIN;
const ALT_SMTP_QUERY = process.env.BENCH_ALT_SMTP_QUERY;
const SCALEOUT_ARGS = flagsOf(process.env.BENCH_SCALEOUT_ARGS);
const SCALEOUT_ALT_ARGS = process.env.BENCH_SCALEOUT_ALT_ARGS
  ? flagsOf(process.env.BENCH_SCALEOUT_ALT_ARGS)
  : undefined;
const TEMPLATES = process.env.BENCH_TEMPLATES
  ? process.env.BENCH_TEMPLATES.split(',').map(corpusTemplate)
  : CORPUS;

// ------------------------------------------------------------------------------------------------ BullMQ

/** Starts Redis on loopback if it does not answer (as `.ci/run` does). */
async function ensureRedis(): Promise<void> {
  const redis = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await redis.ping();
    return;
  } catch {
    execFileSync('redis-server', [
      '--daemonize',
      'yes',
      '--bind',
      '127.0.0.1',
      '-::1',
      '--port',
      '6379',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      '/var/lib/redis',
      '--logfile',
      '/var/log/redis/ci.log',
    ]);
    await new Promise((r) => setTimeout(r, 500));
  } finally {
    redis.disconnect();
  }
}

async function redisCpuMicros(redis: Redis): Promise<number> {
  const pid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
  return processCpuMicros(pid);
}

async function bullmqRun(sink: SinkProcess, template: CorpusTemplate): Promise<StackResult> {
  const queueName = `bench-corpus-${Date.now().toString(36)}`;
  const connection = { host: '127.0.0.1', port: 6379 };
  const queue = new Queue(queueName, { connection });
  const redis = new Redis(connection);
  const worker = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      fileURLToPath(new URL('./support/bullmq-worker.ts', import.meta.url)),
      queueName,
      template.ref,
      String(sink.port),
      BULLMQ_TEXT,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    await new Promise<void>((resolve, reject) => {
      worker.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) resolve();
      });
      worker.once('exit', (code) => reject(new Error(`bullmq worker exited with ${code}`)));
    });
    await sink.reset();
    const pid = worker.pid as number;
    const sinkCpu0 = await sink.cpuMicros();
    const cpu0 = process.cpuUsage();
    const workerCpu0 = processCpuMicros(pid);
    const redisCpu0 = await redisCpuMicros(redis);
    const t0 = performance.now();
    for (let i = 0; i < N; i += BATCH) {
      await queue.addBulk(
        recipients(template, i, N).map((data) => ({
          name: 'send',
          data,
          opts: { removeOnComplete: true, removeOnFail: 1000 },
        })),
      );
    }
    await untilSinkHas(sink, N);
    const seconds = (performance.now() - t0) / 1000;
    const producer = process.cpuUsage(cpu0);
    const cpu =
      processCpuMicros(pid) -
      workerCpu0 +
      producer.user +
      producer.system +
      ((await redisCpuMicros(redis)) - redisCpu0);
    const status = await import('node:fs').then((fs) => fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return {
      perSecond: Math.round(N / seconds),
      seconds: +seconds.toFixed(2),
      cpuMicrosPerMessage: Math.round(cpu / N),
      sinkCpuMicrosPerMessage: Math.round(((await sink.cpuMicros()) - sinkCpu0) / N),
      peakRssMiB: Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024),
      duplicates: await sink.duplicates(),
    };
  } finally {
    const exited = new Promise((r) => worker.once('exit', r));
    worker.kill('SIGTERM');
    await exited;
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
    redis.disconnect();
  }
}

// -------------------------------------------------------------------------------------------------- Loop

/** Recipient 0's message as Mailroom renders it: the loop sends it to everyone. */
async function sample(
  template: CorpusTemplate,
): Promise<{ subject: string; html: string | null; text: string }> {
  const { compiled } = await compileTemplate(template.format, template.source);
  const bodies = contentFromTemplate({ format: template.format, compiled });
  const prepared = prepareContent({
    subject: template.subject,
    preheader: null,
    ...bodies,
    variables: template.globals,
    templateRef: template.ref,
    templateVersion: 1,
  });
  const r = template.recipient(0);
  return renderDelivery(prepared, { ...r, traits: {} });
}

async function loopRun(sink: SinkProcess, template: CorpusTemplate): Promise<StackResult> {
  const message = await sample(template);
  return nodemailerLoop(sink, { from: `Example <${SENDER}>`, ...message }, LOOP_N);
}

// -------------------------------------------------------------------------------------------------- Main

type Stack = 'mailroom' | 'alt' | 'scaleout' | 'scaleoutAlt' | 'bullmq' | 'loop';

/** Per run: SQLite `serve` and its sink's CPU per message over the scale-out's, PostgreSQL's and the sink's. */
function byCpu(serve: StackResult, scaleout: StackResult): number {
  const used =
    scaleout.cpuMicrosPerMessage +
    (scaleout.databaseCpuMicrosPerMessage ?? 0) +
    scaleout.sinkCpuMicrosPerMessage;
  return +((serve.cpuMicrosPerMessage + serve.sinkCpuMicrosPerMessage) / used).toFixed(2);
}

/** The scale-out against SQLite's `serve` run by run: rates, CPU, PostgreSQL's CPU (and the alternative's). */
function scaleoutFigures(serve: StackResult[], scaleout: StackResult[], alt: StackResult[] | undefined) {
  const of = (runs: StackResult[]) => {
    const perRun = runs.map((r, i) => +(r.perSecond / (serve[i]?.perSecond ?? Number.NaN)).toFixed(2));
    const cpu = runs.map((r, i) => (serve[i] ? byCpu(serve[i], r) : Number.NaN));
    return {
      perRun,
      medianOfPerRun: median(perRun),
      byCpu: cpu,
      medianByCpu: median(cpu),
      databaseCpuMicrosPerMessage: runs.map((r) => r.databaseCpuMicrosPerMessage),
      databaseWorkersCpuMicrosPerMessage: runs.map((r) => r.databaseWorkersCpuMicrosPerMessage),
      processCpuMicrosPerMessage: runs.map((r) => (r.processCpuMicros ?? []).map((c) => Math.round(c / N))),
      machine: runs.map((r) => r.machine),
    };
  };
  return {
    scaleoutVsServe: of(scaleout),
    ...(alt ? { scaleoutAltVsServe: of(alt), scaleoutAltArgs: SCALEOUT_ALT_ARGS?.join(' ') } : {}),
  };
}

function summary(runs: StackResult[]) {
  return {
    median: median(runs.map((r) => r.perSecond)),
    runs: runs.map((r) => r.perSecond),
    cpuMicrosPerMessage: median(runs.map((r) => r.cpuMicrosPerMessage)),
    sinkCpuMicrosPerMessage: median(runs.map((r) => r.sinkCpuMicrosPerMessage)),
    ...(runs[0]?.peakRssMiB === undefined
      ? {}
      : { peakRssMiB: Math.max(...runs.map((r) => r.peakRssMiB ?? 0)) }),
    ...(runs[0]?.duplicates === undefined ? {} : { duplicates: runs.map((r) => r.duplicates) }),
  };
}

if (STACKS.has('bullmq')) await ensureRedis();
const sink = await startSinkProcess();
const loadBefore = loadavg()[0];
try {
  for (const template of TEMPLATES) {
    const results: Partial<Record<Stack, StackResult[]>> = {};
    const loads: number[] = [];
    const add = (stack: Stack, result: StackResult) => {
      const runs = results[stack] ?? [];
      runs.push(result);
      results[stack] = runs;
      console.log(`${template.ref} run ${runs.length} ${stack}: ${JSON.stringify(result)}`);
    };
    for (let r = 0; r < RUNS; r++) {
      if (STACKS.has('loop')) add('loop', await loopRun(sink, template));
      if (STACKS.has('bullmq')) add('bullmq', await bullmqRun(sink, template));
      const alt = async () => {
        if (!STACKS.has('alt')) return;
        const options = { args: ALT_ARGS, smtpQuery: ALT_SMTP_QUERY, ...(ALT_BIN ? { bin: ALT_BIN } : {}) };
        add('alt', await serveRun(sink, template, N, options));
      };
      // Alternated: odd runs start with `alt`, so that neither side always runs on a machine that warms
      // up or calms down during the pair.
      const scaleout = async () => {
        if (!SCALEOUT) return;
        add(
          'scaleout',
          await serveRun(sink, template, N, { scaleOut: true, args: [...SERVE_ARGS, ...SCALEOUT_ARGS] }),
        );
        if (SCALEOUT_ALT_ARGS) {
          add(
            'scaleoutAlt',
            await serveRun(sink, template, N, {
              scaleOut: true,
              args: [...SERVE_ARGS, ...SCALEOUT_ALT_ARGS],
            }),
          );
        }
      };
      // The scale-out goes first in odd rounds too: a machine that speeds up or slows down within a
      // round (the lead's quiet runs of issue 42 had one fast scale-out, always the last of three, each
      // right after SQLite's serve) then favours neither side of the ratio.
      if (r % 2 === 1) await scaleout();
      if (r % 2 === 1) await alt();
      if (STACKS.has('mailroom')) add('mailroom', await serveRun(sink, template, N, { args: SERVE_ARGS }));
      if (r % 2 === 0) await alt();
      if (r % 2 === 0) await scaleout();
      loads.push(+(loadavg()[0] ?? 0).toFixed(2));
    }
    const figures = Object.fromEntries(
      Object.entries(results).map(([stack, runs]) => [stack, summary(runs as StackResult[])]),
    );
    const mailroom = results.mailroom;
    const ratio = (other: StackResult[] | undefined, of = mailroom) =>
      of && other
        ? {
            ofMedians: +(median(of.map((r) => r.perSecond)) / median(other.map((r) => r.perSecond))).toFixed(
              2,
            ),
            perRun: of.map((m, i) => +(m.perSecond / (other[i]?.perSecond ?? Number.NaN)).toFixed(2)),
          }
        : undefined;
    report('delivery-corpus', {
      template: template.ref,
      unit: 'messages/s',
      recipients: N,
      loopMessages: LOOP_N,
      bullmqText: BULLMQ_TEXT,
      ...figures,
      mailroomToBullmq: ratio(results.bullmq),
      mailroomToLoop: ratio(results.loop),
      ...(results.alt
        ? {
            serveArgs: SERVE_ARGS.join(' '),
            altArgs: ALT_ARGS.join(' '),
            altSmtpQuery: ALT_SMTP_QUERY,
            scaleoutArgs: SCALEOUT_ARGS.join(' '),
            altToMailroom: ratio(results.mailroom, results.alt),
            altToBullmq: ratio(results.bullmq, results.alt),
          }
        : {}),
      scaleoutToMailroom:
        mailroom && results.scaleout
          ? +(
              median(results.scaleout.map((r) => r.perSecond)) / median(mailroom.map((r) => r.perSecond))
            ).toFixed(2)
          : undefined,
      ...(mailroom && results.scaleout
        ? scaleoutFigures(mailroom, results.scaleout, results.scaleoutAlt)
        : {}),
      loadAfterEachRound: loads,
      loadAverage: [loadBefore, loadavg()[0]].map((l) => +(l ?? 0).toFixed(2)),
    });
  }
} finally {
  await sink.close();
}
