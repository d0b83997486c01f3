/**
 * One worker thread for every package's declaration bundling (issue 37). tsup's `build()` bundles a
 * package's `.d.ts` in a new worker thread (`new Worker(tsup/dist/rollup.js)`, one message, then
 * `terminate()`), and each new worker loads rollup, rollup-plugin-dts and TypeScript again: about a CPU
 * second each, eight times in `pnpm build` and `pack:all`. That worker's message handler does the whole
 * bundle for the options it is sent, nothing kept between messages but loaded modules, so one worker can
 * take the eight packages' messages in turn. While {@link withSharedDtsWorker} runs, tsup's `new Worker`
 * (it reads `Worker` from the `worker_threads` module object at each call) gets a stand-in that forwards to
 * one real worker per script, and whose `terminate()` only detaches it. The output is the same files
 * byte for byte (BENCHMARKS.md, "Test suite", sixteenth session).
 */
import { createRequire } from 'node:module';
import type { Worker as RealWorker, WorkerOptions } from 'node:worker_threads';

type WorkerModule = { Worker: typeof RealWorker };

const workerThreads = createRequire(import.meta.url)('node:worker_threads') as WorkerModule;

/**
 * Runs `steps` with tsup's declaration workers shared: each script's worker is started on first use and
 * ended when `steps` settles. Steps must not bundle at the same time (`package-build.ts` queues them).
 */
export async function withSharedDtsWorker<T>(steps: () => Promise<T>): Promise<T> {
  const Original = workerThreads.Worker;
  const shared = new Map<string, RealWorker>();
  /** The stand-in currently attached to each shared worker: the one its replies go to. */
  const attached = new Map<RealWorker, (data: unknown) => void>();

  class SharedWorker {
    readonly #worker: RealWorker;
    readonly #listeners: ((data: unknown) => void)[] = [];

    constructor(script: string | URL, options?: WorkerOptions) {
      const key = String(script);
      let worker = shared.get(key);
      if (!worker) {
        const started = new Original(script, options);
        started.on('message', (data: unknown) => attached.get(started)?.(data));
        shared.set(key, started);
        worker = started;
      }
      this.#worker = worker;
      attached.set(worker, (data) => {
        for (const listener of this.#listeners) listener(data);
      });
    }

    on(event: string, listener: (data: unknown) => void): this {
      // tsup listens to 'message' only; any other event would not be forwarded, so refuse it loudly.
      if (event !== 'message') throw new Error(`shared dts worker: no '${event}' events`);
      this.#listeners.push(listener);
      return this;
    }

    postMessage(data: unknown): void {
      this.#worker.postMessage(data);
    }

    /** Detaches this stand-in; the worker stays for the next package. */
    terminate(): Promise<number> {
      this.#listeners.length = 0;
      return Promise.resolve(0);
    }
  }

  workerThreads.Worker = SharedWorker as unknown as typeof RealWorker;
  try {
    return await steps();
  } finally {
    workerThreads.Worker = Original;
    await Promise.all([...shared.values()].map((worker) => worker.terminate()));
  }
}
