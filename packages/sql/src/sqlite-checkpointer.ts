import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** WAL pages after which the connection checkpoints inline, while no background thread runs. */
const INLINE_AUTOCHECKPOINT_PAGES = 10_000;
/**
 * WAL pages after which the connection checkpoints inline even though a background thread runs: a
 * safety valve for a thread that cannot keep up; never reached in normal operation.
 */
const SAFETY_AUTOCHECKPOINT_PAGES = 100_000;
/** WAL file size at which the background thread starts. */
const START_AT_WAL_BYTES = 4 * 1024 * 1024;
/** How often the main thread looks at the WAL's size, until the background thread runs. */
const WATCH_INTERVAL_MS = 500;
/** How often the background thread checkpoints. */
const CHECKPOINT_INTERVAL_MS = 200;
/** How long `stop` waits for the thread to close its connection before terminating it. */
const STOP_TIMEOUT_MS = 5_000;

/**
 * The thread's code, plain CommonJS run with `eval` so it loads the same way from the sources and
 * from the build. PASSIVE never waits for readers or writers: it copies what it can and returns.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
let db;
try {
  db = new Database(workerData.file, { timeout: workerData.busyTimeoutMs, fileMustExist: true });
} catch (error) {
  parentPort.postMessage({ type: 'error', message: String(error && error.message) });
  process.exit(0);
}
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    clearInterval(timer);
    db.close();
    parentPort.postMessage({ type: 'error', message: String(error && error.message) });
    process.exit(0);
  }
}, workerData.intervalMs);
parentPort.postMessage({ type: 'ready' });
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort.postMessage({ type: 'stopped' });
  process.exit(0);
});
`;

/** Background checkpoints of one SQLite file (see {@link backgroundCheckpoints}). */
export interface Checkpointer {
  /** Stops the thread (it closes its connection first). Resolves once it has exited. */
  stop(): Promise<void>;
  /** Stops without waiting: for a synchronous close. */
  stopNow(): void;
}

/**
 * Moves WAL checkpoints of `db` off the event loop. A checkpoint copies the WAL into the database file
 * and syncs that file: on these machines 20-35 ms, which, inline, stalls every request and every
 * send the process is serving (the connection that crosses `wal_autocheckpoint` runs it within its
 * commit). Once the WAL has grown past a few MiB (small and test databases never start a thread), a
 * worker thread with its own connection runs a PASSIVE checkpoint every 200 ms; WAL readers and
 * the writer go on meanwhile, and SQLite serializes checkpointers across connections and processes.
 * The connection keeps an inline autocheckpoint at a much larger size as a safety valve, and
 * returns to the usual one if the thread fails.
 */
export function backgroundCheckpoints(
  db: Database.Database,
  file: string,
  busyTimeoutMs: number,
): Checkpointer {
  db.pragma(`wal_autocheckpoint = ${INLINE_AUTOCHECKPOINT_PAGES}`);
  let thread: Worker | undefined;
  let stopped = false;

  const start = () => {
    clearInterval(watch);
    const worker = new Worker(THREAD_SOURCE, {
      eval: true,
      // None of the process's flags: a loader (tsx) or `--input-type=module` would change how the
      // thread's plain CommonJS loads, and the thread needs none of them.
      execArgv: [],
      workerData: {
        module: createRequire(import.meta.url).resolve('better-sqlite3'),
        file,
        busyTimeoutMs,
        intervalMs: CHECKPOINT_INTERVAL_MS,
      },
    });
    worker.on('message', (message: { type: string }) => {
      if (message.type === 'ready' && !stopped && db.open) {
        db.pragma(`wal_autocheckpoint = ${SAFETY_AUTOCHECKPOINT_PAGES}`);
      }
      if (message.type === 'error' && db.open) {
        db.pragma(`wal_autocheckpoint = ${INLINE_AUTOCHECKPOINT_PAGES}`);
      }
    });
    worker.on('error', () => {
      if (db.open) db.pragma(`wal_autocheckpoint = ${INLINE_AUTOCHECKPOINT_PAGES}`);
    });
    // The thread must never keep a process alive that is otherwise done. After the listeners:
    // adding a 'message' listener refs the worker again.
    worker.unref();
    thread = worker;
  };

  const watch = setInterval(() => {
    const size = statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    if (size >= START_AT_WAL_BYTES) start();
  }, WATCH_INTERVAL_MS);
  watch.unref();

  return {
    async stop() {
      stopped = true;
      clearInterval(watch);
      const worker = thread;
      thread = undefined;
      if (!worker) return;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage('stop');
      const timer = setTimeout(() => void worker.terminate(), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
    stopNow() {
      stopped = true;
      clearInterval(watch);
      const worker = thread;
      thread = undefined;
      if (worker) void worker.terminate();
    },
  };
}
