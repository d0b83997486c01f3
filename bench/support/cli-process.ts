/**
 * `mailroom serve` and `mailroom worker` as users run them, each in a process of its own, from the
 * sources (as `pnpm start` does), with their CPU time and peak RSS read from /proc.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../packages/cli/src/bin.ts', import.meta.url));
const BUILT_BIN = fileURLToPath(new URL('../../packages/cli/dist/bin.js', import.meta.url));
const PG_COUNT = fileURLToPath(new URL('./pg-count.cjs', import.meta.url));

/** A running CLI process. */
export interface CliProcess {
  readonly child: ChildProcess;
  /** `serve`: the base URL it listens on. */
  readonly url: string;
  /** What it printed on stdout so far (the banner: secrets, ports). */
  output(): string;
  /** CPU time (user + system, microseconds) the process has used so far, every thread. */
  cpuMicros(): number;
  /** CPU time (user + system, microseconds) of its main thread alone (the event loop; not the worker threads). */
  mainThreadCpuMicros(): number;
  /** Peak resident set size so far, in MiB (VmHWM). */
  peakRssMiB(): number;
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<void>;
}

/**
 * The built CLI by default, as an installed `mailroom` runs (`pnpm build` first; a build older than a
 * source file is refused); `BENCH_BUILT=0` runs the sources through tsx (about 30-50 MiB more RSS).
 */
export function runsBuilt(): boolean {
  if (process.env.BENCH_BUILT === '0') return false;
  const packages = fileURLToPath(new URL('../../packages/', import.meta.url));
  let built: number;
  try {
    built = statSync(BUILT_BIN).mtimeMs;
  } catch {
    throw new Error(
      'the CLI is not built: run `npx pnpm@10 build` first (or BENCH_BUILT=0 to run the sources)',
    );
  }
  for (const name of readdirSync(packages)) {
    const src = join(packages, name, 'src');
    for (const file of readdirSync(src, { recursive: true }) as string[]) {
      if (statSync(join(src, file)).mtimeMs > built) {
        throw new Error(
          `the build is older than packages/${name}/src/${file}: run \`npx pnpm@10 build\` again`,
        );
      }
    }
  }
  return true;
}

/** CPU time of a process from /proc (clock ticks of 1/100 s), in microseconds. */
export function processCpuMicros(pid: number, task?: number): number {
  const stat = readFileSync(
    task === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${task}/stat`,
    'utf8',
  );
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/** How {@link startCli} runs the process, beyond its arguments. */
export interface StartCliOptions {
  /** Node flags before the entry (`--require` of a probe, ...). */
  nodeArgs?: string[];
  /** Another tree's built `bin.js` (a baseline to compare with, in the same run). */
  bin?: string;
  /** Environment variables on top of this process's. */
  env?: Record<string, string>;
}

/**
 * Starts `mailroom <args>` and resolves once it is ready: `serve` when it prints the URL it listens on,
 * `worker` when it says it is running. Logs (stderr) are kept for the error message of a failed start.
 */
export async function startCli(args: string[], options: StartCliOptions = {}): Promise<CliProcess> {
  // BENCH_CPU_PROF=DIR: a CPU profile of each process, written to DIR when it exits.
  const profile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : [];
  // BENCH_PG_COUNT_DIR=DIR: count what each process sends PostgreSQL (`pg-count.cjs`).
  const counting = process.env.BENCH_PG_COUNT_DIR ? ['--require', PG_COUNT] : [];
  // `bin`: another built CLI (a checkout of an earlier commit, for a before/after in the same run).
  const entry = options.bin
    ? [options.bin]
    : runsBuilt()
      ? [BUILT_BIN]
      : ['--import', 'tsx', '--conditions=mailroom-source', BIN];
  const nodeArgs = options.nodeArgs ?? [];
  const child = spawn(process.execPath, [...profile, ...counting, ...nodeArgs, ...entry, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      MAILROOM_LOG_LEVEL: process.env.MAILROOM_LOG_LEVEL ?? 'warn',
      ...options.env,
    },
  });
  let out = '';
  let err = '';
  // BENCH_LOG_DIR=DIR: each process's log (stderr) is kept in DIR (`<command>-<pid>.log`), e.g. to see the
  // render guard's warnings during a run.
  const logDir = process.env.BENCH_LOG_DIR;
  const log = logDir ? createWriteStream(join(logDir, `${args[0]}-${child.pid}.log`)) : undefined;
  child.stderr?.on('data', (chunk: Buffer) => {
    log?.write(chunk);
    err = (err + chunk.toString()).slice(-20_000);
  });
  child.once('exit', () => log?.end());
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`mailroom ${args[0]} did not start:\n${out}\n${err}`)),
      60_000,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const listening = /listening on (http:\/\/[^\s]+)/.exec(out)?.[1];
      if (listening || (args[0] === 'worker' && /worker running/i.test(out + err))) {
        clearTimeout(timer);
        resolve(listening ?? '');
      }
    });
    child.stderr?.on('data', () => {
      if (args[0] === 'worker' && /worker running/i.test(err)) {
        clearTimeout(timer);
        resolve('');
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`mailroom ${args[0]} exited with ${code}:\n${out}\n${err}`));
    });
  });
  const pid = child.pid as number;
  return {
    child,
    url,
    output: () => out,
    cpuMicros: () => processCpuMicros(pid),
    // The main thread's task id is the process id.
    mainThreadCpuMicros: () => processCpuMicros(pid, pid),
    peakRssMiB: () => peakRss(pid),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
