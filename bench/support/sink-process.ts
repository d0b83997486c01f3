/** Starts `count-sink.ts` in a child process and talks to it. */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The sink process, seen from the benchmark. */
export interface SinkProcess {
  readonly port: number;
  /** Messages accepted since the last reset. */
  count(): Promise<number>;
  /** Messages since the last reset whose Message-ID the sink had already seen. */
  duplicates(): Promise<number>;
  /** CPU time (user + system, microseconds) the sink process has used since it started. */
  cpuMicros(): Promise<number>;
  reset(): Promise<void>;
  /** The first message the sink accepted since the last reset, raw, or null (see `count-sink.ts`). */
  sample(): Promise<string | null>;
  close(): Promise<void>;
}

/**
 * Starts the sink and resolves once it listens: the SMTP sink, or with `script` another counting sink of
 * this folder speaking the same IPC (`webhook-sink.ts`). `delayMs`: the SMTP sink answers each message
 * that long after it arrived (a relay's latency).
 */
export async function startSinkProcess(
  script = './count-sink.ts',
  options: { delayMs?: number } = {},
): Promise<SinkProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL(script, import.meta.url))],
    {
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
      env: { ...process.env, BENCH_SINK_DELAY_MS: String(options.delayMs ?? 0) },
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /port (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`sink exited with ${code}`)));
  });
  const ask = (message: string) =>
    new Promise<{ count: number; duplicates: number; cpuMicros: number }>((resolve) => {
      child.once('message', (reply) =>
        resolve(reply as { count: number; duplicates: number; cpuMicros: number }),
      );
      child.send(message);
    });
  return {
    port,
    count: async () => (await ask('count')).count,
    duplicates: async () => (await ask('count')).duplicates,
    cpuMicros: async () => (await ask('count')).cpuMicros,
    reset: async () => {
      await ask('reset');
    },
    sample: () =>
      new Promise<string | null>((resolve) => {
        child.once('message', (reply) => resolve((reply as { sample: string | null }).sample));
        child.send('sample');
      }),
    close: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
    },
  };
}
