import type { Worker } from 'node:worker_threads';
import type { Logger } from '../base/base-types.js';
import { MailroomError } from '../base/errors.js';
import type { DnsResolver } from '../domains/dns-lookup.js';
import { spawnThread, threadEntry } from '../render/spawn-thread.js';
import type { ParseReply, ParseRequest, ThreadFailure } from './parse-protocol.js';
import type { ParsedReceived } from './parse-received.js';
import type { ReceivingEnvelope } from './receiving-types.js';

/** Options of {@link createParsePool}. */
export interface ParsePoolOptions {
  /** Threads to start (at least 1), each on its first message. */
  threads: number;
  /** The `Authentication-Results` server name. */
  authServId: string;
  /**
   * The DNS of the checks: servers the threads ask themselves (the system's when absent), or the app's
   * resolver, asked on the main thread for them (a function cannot cross threads).
   */
  dns: { servers?: string[] } | { resolver: DnsResolver };
  /**
   * Reads a message on this thread: used while no parse thread has loaded yet (seconds from the sources,
   * a few hundred milliseconds built), so that the first messages after a start do not wait for one.
   */
  here(raw: Uint8Array, envelope: ReceivingEnvelope): Promise<ParsedReceived>;
  logger: Logger;
}

/**
 * Reads and judges received messages (`parseReceived`) on worker threads, so that a message's parse and
 * authentication (mailparser, mailauth: two thirds of its CPU) leave the main thread to the store, the
 * sockets and the delivery loop. Started the way the render threads are (`spawnThread`); not the render
 * pool itself, whose threads hold mailings and a composer and are sized for sending.
 */
export interface ParsePool {
  /**
   * One message read and judged.
   * @throws the parser's error (a MIME it cannot read at all), or a retryable `INTERNAL` when its thread
   * died or the pool closed.
   */
  parse(raw: Uint8Array, envelope: ReceivingEnvelope): Promise<ParsedReceived>;
  /**
   * Starts every thread not running yet (they load mailparser and mailauth); resolves when all have
   * loaded, rejects when one cannot start.
   */
  warm(): Promise<void>;
  /** Stops the threads; pending parses reject. */
  close(): Promise<void>;
}

interface Thread {
  worker: Worker;
  /** Loaded: it takes messages (before, they are read on the main thread). */
  ready: boolean;
  /** Settles when it has loaded, or rejects when it died first. */
  loaded: Promise<void>;
  pending: Map<number, { resolve(parsed: ParsedReceived): void; reject(error: unknown): void }>;
}

/** Threads that die before loading, in a row, after which messages are read on the main thread only. */
const GIVE_UP = 3;

/** A pool of `options.threads` parse threads, each started with its first message. */
export function createParsePool(options: ParsePoolOptions): ParsePool {
  const { logger } = options;
  const resolver = 'resolver' in options.dns ? options.dns.resolver : undefined;
  const threads: Array<Thread | undefined> = Array.from({ length: Math.max(1, Math.floor(options.threads)) });
  let nextJob = 0;
  let closed = false;
  /** Threads that died before they loaded, in a row: at {@link GIVE_UP}, none is started again. */
  let failedStarts = 0;

  const dead = (error: unknown) =>
    new MailroomError('INTERNAL', 'parse thread died', { cause: error, retryable: true });

  const start = (slot: number): Thread => {
    const worker = spawnThread(threadEntry('parse-thread', import.meta.url));
    let loaded: { resolve(): void; reject(error: unknown): void } = { resolve() {}, reject() {} };
    const thread: Thread = {
      worker,
      pending: new Map(),
      ready: false,
      loaded: new Promise<void>((resolve, reject) => {
        loaded = { resolve, reject };
      }),
    };
    // Nobody may wait for it (a parse reads on this thread meanwhile): its failure is logged by `fail`.
    thread.loaded.catch(() => {});
    worker.unref();
    const init: ParseRequest = {
      type: 'init',
      authServId: options.authServId,
      dns: resolver ? 'main' : { ...('servers' in options.dns ? { servers: options.dns.servers } : {}) },
    };
    worker.postMessage(init);
    worker.on('message', (reply: ParseReply) => {
      if (reply.type === 'ready') {
        thread.ready = true;
        failedStarts = 0;
        loaded.resolve();
        return;
      }
      if (reply.type === 'dns') {
        void answerLookup(worker, reply.id, reply.name, reply.rrtype);
        return;
      }
      const pending = thread.pending.get(reply.job);
      if (!pending) return;
      thread.pending.delete(reply.job);
      if (thread.pending.size === 0) worker.unref();
      if (reply.type === 'parsed') pending.resolve(reply.parsed);
      else pending.reject(rebuilt(reply.error));
    });
    const fail = (error: unknown) => {
      loaded.reject(error);
      if (threads[slot] !== thread) return;
      threads[slot] = undefined;
      if (closed) return;
      if (!thread.ready) failedStarts++;
      logger.error(
        { err: error },
        failedStarts >= GIVE_UP
          ? 'parse thread did not start; received mail is read on the main thread from now on'
          : 'parse thread died; the next message starts another',
      );
      for (const pending of thread.pending.values()) pending.reject(dead(error));
      thread.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`parse thread exited with code ${code}`)));
    return thread;
  };

  /** The thread of `slot`, started if it is not running. */
  function running(slot: number): Thread {
    const thread = threads[slot] ?? start(slot);
    threads[slot] = thread;
    return thread;
  }

  async function answerLookup(worker: Worker, id: number, name: string, rrtype: string): Promise<void> {
    let reply: ParseRequest;
    try {
      reply = { type: 'dns', id, records: await (resolver as DnsResolver).resolve(name, rrtype) };
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      const failure: ThreadFailure = {
        ...(typeof code === 'string' ? { code } : {}),
        message: error instanceof Error ? error.message : String(error),
      };
      reply = { type: 'dns', id, error: failure };
    }
    worker.postMessage(reply);
  }

  return {
    parse(raw, envelope) {
      if (closed) {
        return Promise.reject(new MailroomError('INTERNAL', 'parse pool closed', { retryable: true }));
      }
      // The least busy thread that has loaded; while none has, this thread reads it (and starts them).
      let thread: Thread | undefined;
      if (failedStarts >= GIVE_UP) return options.here(raw, envelope);
      for (let slot = 0; slot < threads.length; slot++) {
        const t = running(slot);
        if (t.ready && (!thread || t.pending.size < thread.pending.size)) thread = t;
      }
      if (!thread) return options.here(raw, envelope);
      const chosen = thread;
      const job = ++nextJob;
      // The bytes are copied into a buffer of their own and handed over: a view into a larger buffer
      // (a pooled Buffer) would copy all of it.
      const bytes = new Uint8Array(raw);
      const request: ParseRequest = {
        type: 'parse',
        job,
        raw: bytes,
        envelope: {
          envelopeFrom: envelope.envelopeFrom,
          envelopeTo: [...envelope.envelopeTo],
          remoteAddress: envelope.remoteAddress,
          ...(envelope.helo === undefined ? {} : { helo: envelope.helo }),
        },
      };
      return new Promise<ParsedReceived>((resolve, reject) => {
        if (chosen.pending.size === 0) chosen.worker.ref();
        chosen.pending.set(job, { resolve, reject });
        chosen.worker.postMessage(request, [bytes.buffer]);
      });
    },

    async warm() {
      if (closed || failedStarts >= GIVE_UP) return;
      const started: Thread[] = [];
      for (let slot = 0; slot < threads.length; slot++) started.push(running(slot));
      await Promise.all(started.map((t) => t.loaded));
    },

    async close() {
      closed = true;
      const running = threads.filter((t): t is Thread => t !== undefined);
      threads.fill(undefined);
      const closing = new MailroomError('INTERNAL', 'parse pool closed', { retryable: true });
      for (const t of running) {
        for (const pending of t.pending.values()) pending.reject(closing);
        t.pending.clear();
      }
      await Promise.all(running.map((t) => t.worker.terminate()));
    },
  };
}

/** A thread's failure as an error of this thread, its code (a DNS or parser code) kept. */
function rebuilt(failure: ThreadFailure): Error {
  return Object.assign(new Error(failure.message), failure.code ? { code: failure.code } : {});
}
