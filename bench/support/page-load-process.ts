/** Starts `page-load.ts` in a process of its own and reads its figures. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Latencies of the pages a `page-load` process fetched, in milliseconds. */
export interface PageFigures {
  pages: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** A running page load: `stop()` ends it and gives its figures. */
export interface PageLoad {
  stop(): Promise<PageFigures>;
}

/** GETs `url` `rate` times a second (with `authorization: auth`, when given) until stopped. */
export function startPageLoad(url: string, rate: number, auth?: string): PageLoad {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./page-load.ts', import.meta.url)), url, String(rate)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, ...(auth ? { BENCH_PAGE_AUTH: auth } : {}) },
    },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    async stop() {
      child.stdin.write('stop\n');
      const code = await exited;
      if (code !== 0) throw new Error(`page-load ${url} exited with ${code}`);
      return JSON.parse(out.trim()) as PageFigures;
    },
  };
}

/** Loads `url` for `ms` and gives the figures. */
export async function pageLoadFor(
  url: string,
  rate: number,
  ms: number,
  auth?: string,
): Promise<PageFigures> {
  const load = startPageLoad(url, rate, auth);
  await new Promise((resolve) => setTimeout(resolve, ms));
  return load.stop();
}
