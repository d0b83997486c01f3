/**
 * One delivery as users run Mailroom: `mailroom serve` (the built CLI) with its default flags but the
 * database and the relay, fed over HTTP (`POST /send/mail/broadcast` with 250 recipients, then the later
 * batches by `broadcastRef`, one request at a time), timed from the first POST until the sink has every
 * message. Used by `delivery-corpus` (against the BullMQ stack) and by the benchmarks that compare serve
 * with and without a feature (`delivery-tracking`, webhooks): they pass the feature's flags and set-up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import pg from 'pg';
import type { CorpusTemplate } from '../templates/index.js';
import { type CliProcess, startCli } from './cli-process.js';
import { machineTicks } from './machine-cpu.js';
import { backendCpu, workersUrl } from './pg-backends.js';
import type { SinkProcess } from './sink-process.js';

const PG_URL = process.env.MAILROOM_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const SENDER = 'news@example.com';
/** Recipients per HTTP request (the spec's maximum). */
export const BATCH = 250;

/** What one stack did in one run. */
export interface StackResult {
  perSecond: number;
  seconds: number;
  /** Seconds until the sink had every message (before `settle`; equal to `seconds` without one). */
  deliveredSeconds?: number;
  /** CPU of the stack's own processes per message, microseconds (Mailroom: serve and workers; BullMQ: worker, producer, Redis). */
  cpuMicrosPerMessage: number;
  /** Mailroom: the same, counted only until the sink had every message (before `settle`). */
  deliveredCpuMicrosPerMessage?: number;
  sinkCpuMicrosPerMessage: number;
  /** Peak RSS of the stack's largest process (MiB). */
  peakRssMiB?: number;
  duplicates?: number;
  /** Mailroom: seconds from the first POST until the last one was answered (the HTTP feed). */
  feedSeconds?: number;
  /** Mailroom: CPU microseconds of each process until the sink had every message (serve, then the workers). */
  processCpuMicros?: number[];
  /** The same for each process's main thread alone (its event loop). */
  mainThreadCpuMicros?: number[];
  /**
   * Scale-out: CPU of the run's PostgreSQL backends per message until the sink had every message
   * (sampled from /proc every 200 ms, `pg-backends.ts`). On one machine it is taken from the same cores.
   */
  databaseCpuMicrosPerMessage?: number;
  /** Scale-out: of `databaseCpuMicrosPerMessage`, the backends of the workers (the rest is serve's: the accept). */
  databaseWorkersCpuMicrosPerMessage?: number;
  /**
   * The whole machine while the run delivered (`/proc/stat`, all CPUs): the share of CPU time busy and the
   * share stolen by the hypervisor. A run's CPU per message grows with what else the machine (or its host)
   * runs, so these say how quiet the run was, whatever the load average says.
   */
  machine?: { busyPercent: number; stealPercent: number };
}

/** `machineTicks` between two readings, as percentages. */
function machineShare(from: ReturnType<typeof machineTicks>): StackResult['machine'] {
  const to = machineTicks();
  const all = to.all - from.all || 1;
  return {
    busyPercent: Math.round(((to.busy - from.busy) / all) * 100),
    stealPercent: +(((to.steal - from.steal) / all) * 100).toFixed(1),
  };
}

/** How to run serve for one measurement. */
export interface ServeRunOptions {
  /** PostgreSQL, `serve --no-worker` and two `mailroom worker` processes (default: SQLite, serve alone). */
  scaleOut?: boolean;
  /** Extra flags for `serve` and the workers (a feature under test). */
  args?: string[];
  /** Query parameters of the `--smtp` URL (`maxConnections=10`). */
  smtpQuery?: string;
  /** Another built CLI for `serve` (a before/after in the same run); the workers of a scale-out run ours. */
  bin?: string;
  /**
   * Set-up before the server starts, not timed (webhook endpoints, ...), on the same database, by an
   * engine with the allow-list of the `--allow-host` flags in `args`.
   */
  seed?: (mailroom: Mailroom, projectId: string, secret: string) => Promise<void>;
  /** Awaited after the sink has every message, inside the timing (events at a receiver, ...). */
  settle?: () => Promise<void>;
  /**
   * A load beside the delivery (status reads, ...): started once the first POST is answered (the
   * broadcast exists), stopped as soon as the sink has every message.
   */
  during?: (call: { url: string; secret: string; broadcastRef: string }) => { stop(): Promise<void> };
  /**
   * Called with the database URL right before the first POST and again once the sink has every message
   * and the processes have stopped (PostgreSQL flushes a backend's statistics when it ends), not timed:
   * counters of the database read around the delivery (`pg-cost`).
   */
  around?: { before(databaseUrl: string): Promise<void>; after(databaseUrl: string): Promise<void> };
  /** With `scaleOut`: how many `mailroom worker` processes (default 2). */
  workers?: number;
}

/** Waits until the sink has `n` messages; throws past `stallMs` without progress. */
export async function untilSinkHas(sink: SinkProcess, n: number, stallMs = 60_000): Promise<void> {
  let last = -1;
  let lastChange = performance.now();
  for (;;) {
    const got = await sink.count();
    if (got >= n) return;
    if (got !== last) {
      last = got;
      lastChange = performance.now();
    } else if (performance.now() - lastChange > stallMs) {
      throw new Error(`the sink stalled at ${got} of ${n}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Recipients `from` .. `from + BATCH` (fewer at the end) of `n`. */
export function recipients(
  template: CorpusTemplate,
  from: number,
  n: number,
): Array<ReturnType<CorpusTemplate['recipient']>> {
  return Array.from({ length: Math.min(BATCH, n - from) }, (_, j) => template.recipient(from + j));
}

interface Database {
  url: string;
  drop(): Promise<void>;
}

async function sqliteDatabase(): Promise<Database> {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-bench-corpus-'));
  return { url: join(dir, 'mailroom.db'), drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

async function postgresDatabase(): Promise<Database> {
  const schema = `bench_corpus_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  // Names the run's backends in pg_stat_activity (`pg-cost` reads their CPU).
  url.searchParams.set('application_name', schema);
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    },
  };
}

/** The project, sender and template, created before the server starts (not timed); returns the secret. */
async function seedProject(
  url: string,
  template: CorpusTemplate,
  seed: ServeRunOptions['seed'],
  args: readonly string[],
): Promise<string> {
  const allowHosts = args.flatMap((a, i) =>
    a === '--allow-host' && args[i + 1] ? [args[i + 1] as string] : [],
  );
  const mailroom = createMailroom({
    store: sqlStore({ url }),
    transport: memoryTransport(),
    ...(allowHosts.length > 0 ? { fetch: { allowHosts } } : {}),
  });
  try {
    const { project, secret } = await mailroom.admin.createProject({ name: 'Bench' });
    await mailroom.admin.addSender(project.id, { address: SENDER, name: 'Example' });
    await mailroom.admin.createTemplate(project.id, {
      ref: template.ref,
      format: template.format,
      subject: template.subject,
      source: template.source,
    });
    await seed?.(mailroom, project.id, secret);
    return secret;
  } finally {
    await mailroom.close();
  }
}

async function post(url: string, secret: string, body: unknown): Promise<{ broadcastRef: string }> {
  const response = await fetch(`${url}/send/mail/broadcast`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as { data?: { broadcastRef: string } };
  if (!response.ok || !json.data) throw new Error(`POST ${response.status}: ${JSON.stringify(json)}`);
  return json.data;
}

/** Delivers `template` to `n` recipients through `mailroom serve` (see the file's comment). */
export async function serveRun(
  sink: SinkProcess,
  template: CorpusTemplate,
  n: number,
  options: ServeRunOptions = {},
): Promise<StackResult> {
  const db = options.scaleOut ? await postgresDatabase() : await sqliteDatabase();
  const processes: CliProcess[] = [];
  let beside: { stop(): Promise<void> } | undefined;
  let database: ReturnType<typeof backendCpu> | undefined;
  let measured = false;
  try {
    const secret = await seedProject(db.url, template, options.seed, options.args ?? []);
    const smtp = `smtp://127.0.0.1:${sink.port}${options.smtpQuery ? `?${options.smtpQuery}` : ''}`;
    const common = ['--database', db.url, '--smtp', smtp, ...(options.args ?? [])];
    const serve = await startCli(
      ['serve', '--port', '0', ...common, ...(options.scaleOut ? ['--no-worker'] : [])],
      options.bin ? { bin: options.bin } : {},
    );
    processes.push(serve);
    if (options.scaleOut) {
      const workerArgs = ['--database', workersUrl(db.url), ...common.slice(2)];
      const workers = Array.from({ length: options.workers ?? 2 }, () => startCli(['worker', ...workerArgs]));
      processes.push(...(await Promise.all(workers)));
    }
    await sink.reset();
    if (process.env.BENCH_PG_COUNT_DIR) {
      // The start mark of `pg-count.cjs`: what start-up and migrations sent is not counted.
      for (const p of processes) p.child.kill('SIGUSR2');
      await new Promise((r) => setTimeout(r, 200));
    }
    await options.around?.before(db.url);
    if (options.scaleOut) database = backendCpu(db.url);
    const sinkCpu0 = await sink.cpuMicros();
    const cpu0 = processes.map((p) => p.cpuMicros());
    const main0 = processes.map((p) => p.mainThreadCpuMicros());
    const ticks0 = machineTicks();
    const t0 = performance.now();
    const { broadcastRef } = await post(serve.url, secret, {
      subject: template.subject,
      sender: SENDER,
      template: { ref: template.ref, variables: template.globals },
      recipients: recipients(template, 0, n),
    });
    beside = options.during?.({ url: serve.url, secret, broadcastRef });
    for (let i = BATCH; i < n; i += BATCH) {
      await post(serve.url, secret, { broadcastRef, recipients: recipients(template, i, n) });
    }
    const fed = performance.now();
    await untilSinkHas(sink, n);
    const deliveredSeconds = (performance.now() - t0) / 1000;
    const machine = machineShare(ticks0);
    const databaseCpu = await database?.stop();
    const databaseWorkersCpu = database?.workersMicros();
    database = undefined;
    await beside?.stop();
    beside = undefined;
    const cpuUsed = () => processes.reduce((sum, p, i) => sum + p.cpuMicros() - (cpu0[i] as number), 0);
    const deliveredCpu = cpuUsed();
    const processCpu = processes.map((p, i) => p.cpuMicros() - (cpu0[i] as number));
    const mainThreadCpu = processes.map((p, i) => p.mainThreadCpuMicros() - (main0[i] as number));
    await options.settle?.();
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuUsed();
    measured = true;
    return {
      perSecond: Math.round(n / seconds),
      seconds: +seconds.toFixed(2),
      deliveredSeconds: +deliveredSeconds.toFixed(2),
      cpuMicrosPerMessage: Math.round(cpu / n),
      deliveredCpuMicrosPerMessage: Math.round(deliveredCpu / n),
      sinkCpuMicrosPerMessage: Math.round(((await sink.cpuMicros()) - sinkCpu0) / n),
      peakRssMiB: Math.max(...processes.map((p) => p.peakRssMiB())),
      duplicates: await sink.duplicates(),
      feedSeconds: +((fed - t0) / 1000).toFixed(2),
      processCpuMicros: processCpu,
      mainThreadCpuMicros: mainThreadCpu,
      ...(databaseCpu === undefined ? {} : { databaseCpuMicrosPerMessage: Math.round(databaseCpu / n) }),
      ...(databaseWorkersCpu === undefined
        ? {}
        : { databaseWorkersCpuMicrosPerMessage: Math.round(databaseWorkersCpu / n) }),
      machine,
    };
  } finally {
    await beside?.stop();
    await database?.stop();
    for (const p of processes) await p.stop();
    if (measured) await options.around?.after(db.url);
    await db.drop();
  }
}
