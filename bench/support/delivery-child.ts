import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Runs `delivery-run.ts` in a process of its own (so its peak RSS is its own) with `args` and extra `env`,
 * and returns the JSON line it prints last.
 */
export async function runDeliveryChild<T>(
  args: Array<string | number>,
  env: Record<string, string> = {},
): Promise<T> {
  const child = spawn(
    process.execPath,
    // The live set of a run is small (under 100 MB); without a cap V8 lets garbage grow the heap far past
    // it before collecting. The cap makes it collect sooner, which is what a 300 MB budget asks.
    [
      '--max-old-space-size=160',
      '--import',
      'tsx',
      '--conditions=mailroom-source',
      fileURLToPath(new URL('./delivery-run.ts', import.meta.url)),
      ...args.map(String),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`delivery run failed (${code})`);
  return JSON.parse(out.trim().split('\n').at(-1) as string) as T;
}
