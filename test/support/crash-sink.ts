/**
 * A counting SMTP sink on 127.0.0.1 (random port) for delivery tests that send thousands of messages:
 * it keeps, per accepted message, only the recipient, the Message-ID and the arrival time (when the
 * final dot arrived, before the 250 goes out), and discards the bytes. Used by the crash tests (who got
 * what, how many times) and the rate-limit tests (arrival times at the server).
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message the sink accepted. */
export interface Arrival {
  /** The envelope recipient (the tests send one per message). */
  rcpt: string;
  /** The Message-ID header, with its angle brackets ('' when absent). */
  messageId: string;
  /** `performance.now()` when the end of the data arrived. */
  at: number;
}

/** A running counting sink. */
export interface CountingSink {
  readonly host: string;
  readonly port: number;
  /** Every accepted message, in arrival order. */
  readonly arrivals: Arrival[];
  /** Resolves once `count` messages arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/** Starts a counting sink. `onArrival` runs after each accepted message (for example to kill a worker). */
export async function startCountingSink(onArrival?: (count: number) => void): Promise<CountingSink> {
  const arrivals: Arrival[] = [];
  const waiters = new Set<() => void>();
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    // Killed clients leave sessions half-way; the default 5 s close timeout would hold up `close`.
    closeTimeout: 100,
    onData(stream, session, callback) {
      let head = Buffer.alloc(0);
      let headDone = false;
      stream.on('data', (chunk: Buffer) => {
        if (headDone) return;
        head = Buffer.concat([head, chunk]);
        if (head.includes(HEADER_END) || head.length > 64 * 1024) headDone = true;
      });
      stream.on('error', callback);
      stream.on('end', () => {
        const end = head.indexOf(HEADER_END);
        const headers = head
          .subarray(0, end < 0 ? head.length : end)
          .toString('latin1')
          .replace(/\r\n[ \t]+/g, ' ');
        const messageId = /^Message-ID:\s*(<[^>\r\n]*>)/im.exec(headers)?.[1] ?? '';
        for (const r of session.envelope.rcptTo)
          arrivals.push({ rcpt: r.address, messageId, at: performance.now() });
        onArrival?.(arrivals.length);
        for (const wake of waiters) wake();
        callback(null, 'Ok: counted');
      });
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    host: '127.0.0.1',
    port: (server.server.address() as AddressInfo).port,
    arrivals,
    waitFor(count, timeoutMs) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (arrivals.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`counting sink: ${arrivals.length} of ${count} messages after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close() {
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The most arrivals within any window `[t, t + windowMs)`, for arrival times in ascending order. */
export function maxInWindow(times: readonly number[], windowMs = 1000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while ((sorted[end] as number) - (sorted[start] as number) >= windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}
