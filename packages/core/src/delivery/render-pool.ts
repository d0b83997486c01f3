import type { Worker } from 'node:worker_threads';
import type { Logger } from '../base/base-types.js';
import { MailroomError } from '../base/errors.js';
import { spawnThread, threadEntry } from '../render/spawn-thread.js';
import type { ClaimedDelivery, RenderedContent } from '../store/records.js';
import type { TransportComposer } from '../transport/transport.js';
import type { MailingEntry } from './mailing-cache.js';
import type { RenderReply, RenderRequest } from './render-protocol.js';

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
  resolve(built: BuiltMessage): void;
  reject(error: unknown): void;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Mailings this thread has been sent, oldest first. */
  mailings: Set<string>;
}

/**
 * A render thread's garbage dies young (a recipient's render and MIME), so a small young generation costs
 * a few more, cheap, scavenges and saves RSS on every thread (BENCHMARKS.md, `delivery-broadcast`, render
 * threads).
 */
const RENDER_THREAD_LIMITS = { maxYoungGenerationSizeMb: 12 };

/** Mailings a thread keeps parsed at once. */
const MAILINGS_PER_THREAD = 64;

/** Starts `options.threads` render threads. */
export function createRenderPool(options: RenderPoolOptions): RenderPool {
  const { logger } = options;
  let nextJob = 0;
  let closed = false;

  const start = (): Thread => {
    const thread: Thread = { worker: spawn(), pending: new Map(), mailings: new Set() };
    thread.worker.unref();
    const init: RenderRequest = {
      type: 'init',
      composer: options.composer,
      strictVariables: options.strictVariables,
    };
    thread.worker.postMessage(init);
    thread.worker.on('message', (reply: RenderReply) => {
      const pending = thread.pending.get(reply.job);
      if (!pending) return;
      thread.pending.delete(reply.job);
      if (thread.pending.size === 0) thread.worker.unref();
      if ('raw' in reply) pending.resolve({ raw: reply.raw, content: reply.content });
      else
        pending.reject(
          new MailroomError(reply.error.code, reply.error.message, { retryable: reply.error.retryable }),
        );
    });
    const fail = (error: unknown) => {
      if (closed) return;
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
        thread.pending.set(job, { resolve, reject });
        thread.worker.postMessage(request);
      });
    },

    async close() {
      closed = true;
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
function spawn(): Worker {
  return spawnThread(threadEntry('render-thread', import.meta.url), { resourceLimits: RENDER_THREAD_LIMITS });
}
