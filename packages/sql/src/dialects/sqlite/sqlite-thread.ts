import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { sqliteModulePath } from '../../connection/drivers.js';

/** WAL pages after which the connection checkpoints inline, while no background thread runs. */
export const INLINE_AUTOCHECKPOINT_PAGES = 10_000;
/**
 * WAL pages after which a connection checkpoints inline even though the background thread runs: a
 * safety valve for a thread that cannot keep up; never reached in normal operation.
 */
const SAFETY_AUTOCHECKPOINT_PAGES = 100_000;
/** WAL file size at which the background thread starts (if no write has started it before). */
const START_AT_WAL_BYTES = 4 * 1024 * 1024;
/** How often the main thread looks at the WAL's size, until the background thread runs. */
const WATCH_INTERVAL_MS = 500;
/**
 * How often the background thread checkpoints. Every second made a CSV import a little faster (fewer
 * fsyncs on the thread), but let the WAL and the kernel's dirty pages grow for a second of writes, and
 * under `mailroom serve`'s batch load single requests then waited on the disk (BENCHMARKS.md, "CSV
 * sources").
 */
const CHECKPOINT_INTERVAL_MS = 200;
/**
 * How long no connection must have written before the background thread truncates the WAL to zero
 * bytes (a TRUNCATE checkpoint, which never waits for a busy reader or writer: it tries again later).
 */
const IDLE_TRUNCATE_MS = 1000;
/** How long `stop` waits for the thread to finish its scripts and close before terminating it. */
const STOP_TIMEOUT_MS = 30_000;
/** Prepared statements the thread keeps. */
const STATEMENT_CACHE_SIZE = 64;

/** One statement of a write script: `?` placeholders, plain values (strings, numbers, null). */
export interface ScriptStatement {
  text: string;
  params: unknown[];
  /**
   * The script's condition: when this statement changes no row, the transaction is rolled back and the
   * script reports `committed: false` (a lease fence: `UPDATE ... WHERE id = ? AND lease_token = ?`).
   */
  guard?: boolean;
}

/**
 * What a script did: committed, with each statement's changed rows; rolled back by its guard; or not
 * run at all (`skipped`) because the script it was to follow did not commit.
 */
export type ScriptResult = { committed: true; changes: number[] } | { committed: false; skipped?: true };

/** A script posted to the thread: its id, to name it as another one's `after`. */
export interface PostedScript {
  id: number;
  result: Promise<ScriptResult>;
}

/**
 * The thread's code, plain CommonJS run with `eval` so it loads the same way from the sources and from
 * the build. Its connection gets the store's pragmas (`workerData.pragmas`). PASSIVE never waits for readers or writers: it
 * copies what it can and returns; a checkpoint runs between two scripts, never during one.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
let db;
try {
  db = new Database(workerData.file, { timeout: workerData.busyTimeoutMs, fileMustExist: true });
  db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
  for (const pragma of workerData.pragmas) db.pragma(pragma);
  db.pragma('wal_autocheckpoint = ' + workerData.autocheckpointPages);
} catch (error) {
  parentPort.postMessage({ type: 'error', message: String(error && error.message) });
  process.exit(0);
}
// Writes since the last tick: another connection's commits change data_version, this one's set wrote.
let version = db.pragma('data_version', { simple: true });
let wrote = false;
let quietSince = Date.now();
let truncated = false;
const timer = setInterval(() => {
  try {
    const now = Date.now();
    const current = db.pragma('data_version', { simple: true });
    if (current !== version || wrote) {
      version = current;
      wrote = false;
      quietSince = now;
      truncated = false;
    }
    if (!truncated && now - quietSince >= workerData.idleTruncateMs) {
      // Quiet: copy the whole WAL back and cut its file to zero, so that an idle database holds no WAL
      // on disk. Without waiting: a reader or writer still at work makes it report busy; the next tick tries again.
      db.pragma('busy_timeout = 0');
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)');
      db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
      truncated = result !== undefined && result.busy === 0;
    } else {
      db.pragma('wal_checkpoint(PASSIVE)');
    }
  } catch (error) {
    clearInterval(timer);
    db.close();
    parentPort.postMessage({ type: 'error', message: String(error && error.message) });
    process.exit(0);
  }
}, workerData.intervalMs);
const cache = new Map();
const prepare = (text) => {
  let statement = cache.get(text);
  if (statement === undefined) {
    statement = db.prepare(text);
    if (cache.size >= workerData.cacheSize) cache.delete(cache.keys().next().value);
    cache.set(text, statement);
  }
  return statement;
};
// Whether each recent script committed, for the scripts that are to follow one (\`after\`).
const outcomes = new Map();
const outcome = (id, committed) => {
  outcomes.set(id, committed);
  if (outcomes.size > 256) outcomes.delete(outcomes.keys().next().value);
};
const failed = (id, error) =>
  parentPort.postMessage({ type: 'done', id, error: { message: String(error && error.message), code: error && error.code } });
function runScript(id, statements, after) {
  outcome(id, false);
  if (after !== undefined && outcomes.get(after) !== true) {
    return parentPort.postMessage({ type: 'done', id, result: { committed: false, skipped: true } });
  }
  try {
    prepare('BEGIN IMMEDIATE').run();
  } catch (error) {
    return failed(id, error);
  }
  try {
    const changes = [];
    for (const { text, params, guard } of statements) {
      const changed = prepare(text).run(params).changes;
      if (guard && changed === 0) {
        prepare('ROLLBACK').run();
        return parentPort.postMessage({ type: 'done', id, result: { committed: false } });
      }
      changes.push(changed);
    }
    prepare('COMMIT').run();
    wrote = true;
    outcome(id, true);
    parentPort.postMessage({ type: 'done', id, result: { committed: true, changes } });
  } catch (error) {
    if (db.inTransaction) {
      try { db.prepare('ROLLBACK').run(); } catch {}
    }
    failed(id, error);
  }
}
parentPort.on('message', (message) => {
  if (message === 'stop') {
    clearInterval(timer);
    db.close();
    parentPort.postMessage({ type: 'stopped' });
    process.exit(0);
  }
  runScript(message.id, message.statements, message.after);
});
parentPort.postMessage({ type: 'ready' });
`;

/** The background thread of one SQLite file (see {@link sqliteThread}). */
export interface SqliteThread {
  /**
   * Runs `statements` on the thread's connection in ONE `BEGIN IMMEDIATE` transaction, in order, and
   * commits; rolls back when a guard statement changes nothing, or when a statement fails (the promise
   * then rejects with an error carrying SQLite's `code`, so that contention is retried like any busy
   * error). Scripts run one after another, in the order given. Parameters cross the thread boundary by
   * structured clone: pass many rows as one JSON text, not as objects. Starts the thread if needed.
   *
   * `after`: the id of a script posted before; this one runs only if that one committed, and is
   * otherwise answered `skipped` without touching the database. The thread goes on to it at once,
   * without waiting for this thread to learn the first one's outcome.
   */
  run(statements: readonly ScriptStatement[], after?: number): PostedScript;
  /** False once the thread failed (it could not open the file, or a checkpoint failed): write inline. */
  readonly usable: boolean;
  /** Stops the thread once its scripts are done (it closes its connection first). */
  stop(): Promise<void>;
  /** Stops at once: for a synchronous close. */
  stopNow(): void;
}

/** Settings of the thread's connection: the store's, for the same file. */
export interface SqliteThreadOptions {
  file: string;
  busyTimeoutMs: number;
  /** Pragmas of the store's connection to repeat on the thread's (synchronous, cache size, ...). */
  pragmas: readonly string[];
}

/**
 * One background thread per SQLite file, with its own connection, for the work that must not run on
 * the event loop (better-sqlite3 is synchronous, so on the main connection it holds the event loop for
 * its whole duration):
 *
 * - WAL checkpoints. A checkpoint copies the WAL into the database file and syncs that file, a wait on
 *   the disk (BENCHMARKS.md, "Store") which, inline, stalls every request and send the process serves (the
 *   connection that crosses `wal_autocheckpoint` runs it within its commit). Once the WAL has grown past
 *   a few MiB (small and test databases never start a thread), the thread runs a PASSIVE checkpoint
 *   every 200 ms, and once nothing was written for a second, a TRUNCATE checkpoint that cuts the WAL
 *   file to zero bytes (so the WAL's disk space is bounded by a few MiB under load and nothing when
 *   idle, the bound a small disk needs: BENCHMARKS.md, "Store outages"); readers and writers go on meanwhile, and SQLite serializes checkpointers across
 *   connections and processes. The main connection keeps an inline autocheckpoint at a much larger size
 *   as a safety valve, and returns to the usual one if the thread fails.
 * - Large write transactions ({@link SqliteThread.run}): a page of a broadcast source (thousands of
 *   rows) is written there while the event loop parses the next one. The main connection may meanwhile
 *   wait on the write lock the thread holds (its busy timeout), at most for the scripts already posted
 *   (a worker keeps three pages in flight, and posts no more while its thread waits), as it would have
 *   waited for the same transactions run inline; it never blocks the thread, which has its own event
 *   loop.
 *
 * The thread never keeps a process alive that is otherwise done, except while a script is in flight.
 */
export function sqliteThread(db: Database.Database, options: SqliteThreadOptions): SqliteThread {
  db.pragma(`wal_autocheckpoint = ${INLINE_AUTOCHECKPOINT_PAGES}`);
  let worker: Worker | undefined;
  let failure: Error | undefined;
  let stopped = false;
  const pending = new Map<number, { resolve: (r: ScriptResult) => void; reject: (e: Error) => void }>();
  let nextId = 1;

  const inline = () => {
    if (db.open) db.pragma(`wal_autocheckpoint = ${INLINE_AUTOCHECKPOINT_PAGES}`);
  };
  const fail = (error: Error) => {
    failure ??= error;
    inline();
    for (const { reject } of pending.values()) reject(failure);
    pending.clear();
  };

  const start = (): Worker => {
    clearInterval(watch);
    if (worker) return worker;
    const thread = new Worker(THREAD_SOURCE, {
      eval: true,
      // None of the process's flags: a loader (tsx) or `--input-type=module` would change how the
      // thread's plain CommonJS loads, and the thread needs none of them.
      execArgv: [],
      workerData: {
        module: sqliteModulePath(),
        file: options.file,
        busyTimeoutMs: Math.max(0, Math.floor(options.busyTimeoutMs)),
        pragmas: options.pragmas,
        autocheckpointPages: SAFETY_AUTOCHECKPOINT_PAGES,
        intervalMs: CHECKPOINT_INTERVAL_MS,
        idleTruncateMs: IDLE_TRUNCATE_MS,
        cacheSize: STATEMENT_CACHE_SIZE,
      },
    });
    thread.on(
      'message',
      (message: {
        type: string;
        id?: number;
        message?: string;
        result?: ScriptResult;
        error?: { message: string; code?: unknown };
      }) => {
        if (message.type === 'ready') {
          if (!stopped && db.open) db.pragma(`wal_autocheckpoint = ${SAFETY_AUTOCHECKPOINT_PAGES}`);
        } else if (message.type === 'error') {
          fail(new Error(`SQLite background thread: ${message.message}`));
        } else if (message.type === 'done' && message.id !== undefined) {
          const waiter = pending.get(message.id);
          pending.delete(message.id);
          if (pending.size === 0) thread.unref();
          if (!waiter) return;
          if (message.error) {
            const error = new Error(message.error.message) as Error & { code?: unknown };
            if (message.error.code !== undefined) error.code = message.error.code;
            waiter.reject(error);
          } else {
            waiter.resolve(message.result as ScriptResult);
          }
        }
      },
    );
    thread.on('error', (error) => fail(error));
    thread.on('exit', (code) => {
      if (!stopped) fail(new Error(`SQLite background thread exited (code ${code})`));
    });
    // The thread must never keep a process alive that is otherwise done. After the listeners: adding
    // a 'message' listener refs the worker again.
    thread.unref();
    worker = thread;
    return thread;
  };

  const watch = setInterval(() => {
    const size = statSync(`${options.file}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    if (size >= START_AT_WAL_BYTES) start();
  }, WATCH_INTERVAL_MS);
  watch.unref();

  return {
    get usable() {
      return failure === undefined && !stopped;
    },
    run(statements, after) {
      const id = nextId++;
      if (failure) return { id, result: Promise.reject(failure) };
      if (stopped) return { id, result: Promise.reject(new Error('SQLite background thread stopped')) };
      const thread = start();
      const result = new Promise<ScriptResult>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        thread.ref();
        thread.postMessage({ id, statements, after });
      });
      return { id, result };
    },
    async stop() {
      stopped = true;
      clearInterval(watch);
      const thread = worker;
      worker = undefined;
      if (!thread || failure) {
        await thread?.terminate();
        return;
      }
      const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
      // Messages are handled in order: scripts already posted commit before 'stop'.
      thread.postMessage('stop');
      thread.ref();
      const timer = setTimeout(() => void thread.terminate(), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
    stopNow() {
      stopped = true;
      clearInterval(watch);
      const thread = worker;
      worker = undefined;
      if (thread) void thread.terminate();
    },
  };
}
