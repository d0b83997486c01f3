import type { Worker } from 'node:worker_threads';
import type { Logger } from '../base/base-types.js';
import { MailroomError } from '../base/errors.js';
import { sourceModule } from '../render/source-bundle.js';
import { spawnThread, threadEntry } from '../render/spawn-thread.js';
import type { ClaimedDelivery, RenderedContent } from '../store/records.js';
import type { TransportComposer } from '../transport/transport.js';
import type { MailingEntry } from './mailing-cache.js';
import type { RenderReply, RenderRequest } from './render-protocol.js';
import { type RunningRender, renderClockMs, runningRender, runningRenderMemory } from './render-running.js';

/** What a render thread returns for one recipient. */
export interface BuiltMessage {
  /** The finished MIME bytes (signed when the mailing's sender has a DKIM key). */
  raw: Uint8Array;
  /** The rendered content, when the mailing keeps it (`storeContent`). */
  content: RenderedContent | null;
}

/** Options of {@link createRenderPool}. */
export interface RenderPoolOptions {
  /** Threads to start (at least 1). */
  threads: number;
  /** The core's composer for the transport (`outgoingComposer(...).threadComposer`), loaded by every thread. */
  composer: TransportComposer;
  strictVariables: boolean;
  logger: Logger;
  /** Called with each render's time on its thread (milliseconds), for the project's render budget. */
  onRender?(projectId: string, renderMs: number): void;
  /**
   * A build that holds its thread this long (milliseconds) is a runaway: `onStuck` is told its project,
   * and that project's other builds waiting on the thread are taken off it (rejected with
   * {@link RenderRequeued}, to be built elsewhere), so the builds of other projects wait for the runaway
   * alone. Absent: builds run to their end (liquidjs's render limit ends a runaway one).
   */
  stuckMs?: number;
  onStuck?(projectId: string): void;
  /**
   * A build that holds its thread this long (milliseconds) is one the render limit does not stop: the
   * thread is stopped and another started, and every build it held is rejected with
   * {@link RenderRequeued}. Only with `stuckMs`. @default 5_000
   */
  hardLimitMs?: number;
}

/**
 * A build handed back unbuilt because its thread was stopped (stuck behind a runaway render, see
 * `RenderPoolOptions.stuckMs`): build it again.
 */
export class RenderRequeued extends Error {
  constructor() {
    super('render thread stopped while the build waited; build it again');
    this.name = 'RenderRequeued';
  }
}

/**
 * Renders recipients and builds their MIME on worker threads, so that the main thread is left with the
 * store and the sockets. Each thread keeps a mailing's parsed content, attachments and parsed DKIM key
 * after its first recipient, so per-recipient work is the render and the encoding of that recipient's
 * parts only.
 */
export interface RenderPool {
  /**
   * The message of one delivery.
   * @throws MailroomError `RENDER_FAILED` (the render failed: final for this recipient), the composer's
   * error (a message it cannot build), or a retryable `INTERNAL` when a thread died.
   */
  build(
    entry: MailingEntry,
    delivery: ClaimedDelivery,
    headers: Record<string, string>,
    now: Date,
  ): Promise<BuiltMessage>;
  /** Stops the threads; pending builds reject. */
  close(): Promise<void>;
}

interface Pending {
  projectId: string;
  resolve(built: BuiltMessage): void;
  reject(error: unknown): void;
}

interface Thread {
  worker: Worker;
  /** Builds posted to the thread, in posting order (the thread runs them in that order). */
  pending: Map<number, Pending>;
  /** Mailings this thread has been sent, oldest first. */
  mailings: Set<string>;
  /** The render the thread is running now, as the thread itself tells (`render-running.ts`). */
  running: RunningRender;
  /** Stopped as stuck: its events are ignored. */
  retired: boolean;
  /** Jobs taken off the thread, by `job % CANCEL_SLOTS` (the thread skips them), shared with it. */
  cancelled: Int32Array;
  /** The job whose runaway was reported (once per job). */
  noted: number;
}

/**
 * A render thread's garbage dies young (a recipient's render and MIME), so a small young generation costs
 * a few more, cheap, scavenges and saves RSS on every thread (BENCHMARKS.md, `delivery-broadcast`, render
 * threads).
 */
const RENDER_THREAD_LIMITS = { maxYoungGenerationSizeMb: 12 };

/** Slots of a thread's cancelled jobs (a job is one if its slot holds its number). */
export const CANCEL_SLOTS = 1024;

/** Mailings a thread keeps parsed at once. */
const MAILINGS_PER_THREAD = 64;

/** Starts `options.threads` render threads. */
export function createRenderPool(options: RenderPoolOptions): RenderPool {
  const { logger } = options;
  let nextJob = 0;
  let closed = false;

  const start = (): Thread => {
    const memory = runningRenderMemory();
    // From the sources, the thread imports the composer's bundle (see `sourceModule`).
    const composer = { ...options.composer, module: sourceModule(options.composer.module) };
    const thread: Thread = {
      worker: spawn(composer.module),
      pending: new Map(),
      mailings: new Set(),
      running: runningRender(memory),
      retired: false,
      cancelled: new Int32Array(new SharedArrayBuffer(CANCEL_SLOTS * 4)),
      noted: 0,
    };
    thread.worker.unref();
    const init: RenderRequest = {
      type: 'init',
      composer,
      strictVariables: options.strictVariables,
      cancelled: thread.cancelled,
      running: memory,
    };
    thread.worker.postMessage(init);
    thread.worker.on('message', (reply: RenderReply) => {
      const pending = thread.pending.get(reply.job);
      if (!pending || thread.retired) return;
      thread.pending.delete(reply.job);
      if (thread.pending.size === 0) thread.worker.unref();
      if (reply.renderMs > 0) options.onRender?.(pending.projectId, reply.renderMs);
      if ('raw' in reply) pending.resolve({ raw: reply.raw, content: reply.content });
      else
        pending.reject(
          new MailroomError(reply.error.code, reply.error.message, { retryable: reply.error.retryable }),
        );
    });
    const fail = (error: unknown) => {
      if (closed || thread.retired) return;
      logger.error({ err: error }, 'render thread died; starting another');
      const index = threads.indexOf(thread);
      if (index >= 0) threads[index] = start();
      for (const pending of thread.pending.values()) {
        pending.reject(
          new MailroomError('INTERNAL', 'render thread died', {
            cause: error,
            retryable: true,
            source: 'render',
          }),
        );
      }
      thread.pending.clear();
    };
    thread.worker.on('error', fail);
    thread.worker.on('exit', (code) => {
      if (code !== 0 || thread.pending.size > 0) fail(new Error(`render thread exited with code ${code}`));
    });
    return thread;
  };

  const threads: Thread[] = Array.from({ length: Math.max(1, Math.floor(options.threads)) }, start);

  // A runaway render holds its thread until liquidjs's render limit (a second per part). The builds of
  // its project waiting behind it are taken off the thread (they would each hold it as long); a build
  // that even the render limit does not stop is ended with its thread. Judged by the render the thread
  // says it runs, and since when: not by the replies this thread has read (it may be late reading them).
  const { stuckMs } = options;
  const hardLimitMs = options.hardLimitMs ?? 5_000;
  const watch =
    stuckMs === undefined
      ? undefined
      : setInterval(
          () => {
            const now = renderClockMs();
            for (const thread of [...threads]) {
              const job = Atomics.load(thread.running.job, 0);
              if (job === 0) continue;
              const held = now - (thread.running.since[0] as number);
              if (held >= hardLimitMs) retire(thread, job, held);
              else if (held >= stuckMs) divert(thread, job);
            }
          },
          Math.max(10, (stuckMs ?? 0) / 4),
        );
  watch?.unref();

  /** Reports the runaway `job`, and takes its project's builds waiting behind it off the thread. */
  function divert(thread: Thread, job: number): void {
    const head = thread.pending.get(job);
    if (!head || thread.noted === job) return;
    thread.noted = job;
    logger.warn({ projectId: head.projectId }, 'a render holds its render thread; its project renders apart');
    options.onStuck?.(head.projectId);
    // The thread runs its builds in posting order: those before `job` are built (their replies unread).
    for (const [other, pending] of thread.pending) {
      if (other <= job || pending.projectId !== head.projectId) continue;
      Atomics.store(thread.cancelled, other % CANCEL_SLOTS, other);
      thread.pending.delete(other);
      pending.reject(new RenderRequeued());
    }
  }

  function retire(thread: Thread, job: number, heldMs: number): void {
    const index = threads.indexOf(thread);
    const head = thread.pending.get(job);
    if (index < 0 || !head) return;
    thread.retired = true;
    threads[index] = start();
    logger.warn(
      { projectId: head.projectId, heldMs },
      'a render held its render thread too long; thread restarted',
    );
    // The time it held the thread is charged (no reply will); its project renders apart from now on.
    options.onRender?.(head.projectId, heldMs);
    options.onStuck?.(head.projectId);
    const held = [...thread.pending.values()];
    thread.pending.clear();
    void thread.worker.terminate();
    for (const pending of held) pending.reject(new RenderRequeued());
  }

  return {
    build(entry, delivery, headers, now) {
      if (closed)
        return Promise.reject(new MailroomError('INTERNAL', 'render pool closed', { retryable: true }));
      // The least busy thread: builds differ in size (attachments, long pages).
      let thread = threads[0] as Thread;
      for (const t of threads) if (t.pending.size < thread.pending.size) thread = t;
      const { mailing, parts, tracking } = entry;
      if (!thread.mailings.has(mailing.id)) {
        if (thread.mailings.size >= MAILINGS_PER_THREAD) {
          const oldest = thread.mailings.values().next().value as string;
          thread.mailings.delete(oldest);
          thread.worker.postMessage({ type: 'forget', mailingId: oldest } satisfies RenderRequest);
        }
        thread.mailings.add(mailing.id);
        thread.worker.postMessage({ type: 'mailing', mailing, parts, tracking } satisfies RenderRequest);
      }
      const job = ++nextJob;
      const request: RenderRequest = {
        type: 'build',
        job,
        mailingId: mailing.id,
        deliveryId: delivery.id,
        recipient: {
          messageId: delivery.messageId,
          address: delivery.address,
          name: delivery.name,
          variables: delivery.variables,
          traits: delivery.traits,
        },
        headers,
        now: now.getTime(),
        keepContent: mailing.options.storeContent,
      };
      return new Promise<BuiltMessage>((resolve, reject) => {
        if (thread.pending.size === 0) thread.worker.ref();
        thread.pending.set(job, { projectId: mailing.projectId, resolve, reject });
        thread.worker.postMessage(request);
      });
    },

    async close() {
      closed = true;
      clearInterval(watch);
      await Promise.all(threads.map((t) => t.worker.terminate()));
      for (const t of threads) {
        for (const pending of t.pending.values()) {
          pending.reject(new MailroomError('INTERNAL', 'render pool closed', { retryable: true }));
        }
      }
    },
  };
}

/** The render thread, this file's sibling (see `spawnThread` for how it starts from the sources). */
function spawn(composerModule: string): Worker {
  return spawnThread(
    threadEntry('render-thread', import.meta.url),
    { resourceLimits: RENDER_THREAD_LIMITS },
    [composerModule],
  );
}
