import type { Worker } from 'node:worker_threads';
import type { PreviewLoading, PreviewReady, PreviewReply, PreviewRequest } from './preview-protocol.js';
import { spawnThread, threadEntry } from './spawn-thread.js';

/** What the renderer whose job runs on the thread is told about it. */
export interface PreviewTurn {
  /** The thread is loaded, or has loaded a part (MJML) for the job: the job's hard limit counts from now. */
  ready(): void;
  /** The thread starts loading a part (MJML) for the job: its hard limit waits for the next `ready`. */
  loading(): void;
  /** The job's answer. */
  reply(reply: PreviewReply): void;
  /** The thread died while the job ran. */
  died(error: unknown): void;
}

/** One renderer's hold on the host's thread (see {@link PreviewThreadHost.acquire}). */
export interface PreviewThreadLease {
  /** Whether the thread has loaded (a job's hard limit counts from then). */
  readonly ready: boolean;
  /**
   * Posts `request` to the thread if it is free and it is this renderer's turn, and tells `turn` what
   * happens to it; false otherwise: the lease's `next` is called once the thread is free for it.
   */
  tryRun(request: PreviewRequest, turn: PreviewTurn): boolean;
  /**
   * Stops this renderer's running job with the thread (its hard limit): the next job, whoever's, starts
   * another thread.
   */
  stop(): void;
  /**
   * The renderer is closed: its running job's thread is stopped; once the last lease is released the
   * thread stops after {@link IDLE_STOP_MS} idle.
   */
  release(): Promise<void>;
}

/**
 * The preview thread of a process, shared by its engines' preview renderers (reference-counted): one job
 * at a time, the renderers with jobs waiting taking turns (each renderer picks its own next job, round-robin
 * over its projects). A process with several engines (tests, a host embedding more than one) loads the
 * thread and MJML once instead of once per engine; an engine's preview waits one render of another's at
 * most, as a project's waits one of another project's. The last engine closed leaves the thread idle for
 * a while, for an engine opened next.
 */
export interface PreviewThreadHost {
  /** A hold on the thread for one renderer; `next` is called when the thread is free for its next job. */
  acquire(next: () => void): PreviewThreadLease;
  /** Threads started so far (a hard limit or a death starts another). */
  readonly started: number;
  /** Parts (MJML) the threads loaded so far: once per thread, with its first MJML check. */
  readonly loads: number;
}

/**
 * How long the thread outlives the last engine that used it, idle (unreferenced: it keeps no process
 * alive). An engine opened meanwhile gets it loaded.
 */
const IDLE_STOP_MS = 10_000;

interface Holder {
  lease: object;
  job: number;
  turn: PreviewTurn;
}

/** A host of its own (tests); engines use {@link sharedPreviewThreadHost}. */
export function createPreviewThreadHost(): PreviewThreadHost {
  let users = 0;
  let started = 0;
  let loads = 0;
  let worker: Worker | undefined;
  let ready = false;
  let holder: Holder | undefined;
  /** Renderers waiting for the thread, in the order they asked. */
  const waiting = new Map<object, () => void>();
  /** The renderer being offered the thread (inside its `next`): only it may take it. */
  let offered: object | undefined;
  /** Stops the thread once no engine has used it for {@link IDLE_STOP_MS}. */
  let idle: NodeJS.Timeout | undefined;

  const start = (): Worker => {
    const thread = spawnThread(threadEntry('preview-thread', import.meta.url));
    started++;
    thread.unref();
    ready = false;
    thread.on('message', (message: PreviewReply | PreviewReady | PreviewLoading) => {
      if (thread !== worker) return;
      if ('loading' in message) {
        loads++;
        holder?.turn.loading();
        return;
      }
      if ('ready' in message) {
        ready = true;
        holder?.turn.ready();
        return;
      }
      if (holder?.job !== message.job) return;
      const { turn } = holder;
      holder = undefined;
      thread.unref();
      turn.reply(message);
      offer();
    });
    const died = (error: unknown) => {
      if (thread !== worker) return;
      worker = undefined;
      ready = false;
      const lost = holder;
      holder = undefined;
      lost?.turn.died(error);
      offer();
    };
    thread.on('error', died);
    thread.on('exit', (code) => died(new Error(`preview thread exited with code ${code}`)));
    return thread;
  };

  /** Offers the free thread to the renderers waiting, in turn, until one takes it. */
  const offer = (): void => {
    for (const [lease, next] of waiting) {
      if (holder) return;
      waiting.delete(lease);
      offered = lease;
      try {
        next();
      } finally {
        offered = undefined;
      }
    }
  };

  const stopThread = (): Promise<number> | undefined => {
    const thread = worker;
    worker = undefined;
    ready = false;
    return thread?.terminate();
  };

  return {
    get started() {
      return started;
    },
    get loads() {
      return loads;
    },
    acquire(next) {
      users++;
      clearTimeout(idle);
      const lease: PreviewThreadLease = {
        get ready() {
          return ready && worker !== undefined;
        },
        tryRun(request, turn) {
          const turnOfOther = offered !== undefined ? offered !== lease : waiting.size > 0;
          if (holder || turnOfOther) {
            if (!waiting.has(lease)) waiting.set(lease, next);
            return false;
          }
          waiting.delete(lease);
          worker ??= start();
          holder = { lease, job: request.job, turn };
          worker.ref();
          worker.postMessage(request);
          return true;
        },
        stop() {
          if (holder?.lease !== lease) return;
          holder = undefined;
          void stopThread();
          offer();
        },
        async release() {
          users--;
          waiting.delete(lease);
          if (holder?.lease === lease) {
            // Its running job is abandoned: the thread stops with it (the next job starts another).
            holder = undefined;
            const stopping = stopThread();
            offer();
            await stopping;
          }
          if (users === 0 && worker) {
            // The last engine closed: the idle thread stays a while for an engine opened next (a test file
            // opens one per test; reloading the thread and MJML cost each up to a second of CPU).
            clearTimeout(idle);
            idle = setTimeout(() => {
              if (users === 0) void stopThread();
            }, IDLE_STOP_MS);
            idle.unref();
          }
        },
      };
      return lease;
    },
  };
}

let shared: PreviewThreadHost | undefined;

/** The process's preview thread host, shared by every engine's preview renderer. */
export function sharedPreviewThreadHost(): PreviewThreadHost {
  shared ??= createPreviewThreadHost();
  return shared;
}
