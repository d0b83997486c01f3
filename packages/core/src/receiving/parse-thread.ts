/**
 * The parse thread: reads and judges received messages (postal-mime or mailparser, mailauth's SPF, DKIM, DMARC and ARC,
 * the reply parser) off the engine's main thread, which keeps the store, the sockets and the delivery
 * loop. Started by `createParsePool`; the message is stored by the main thread, before its 250.
 */
import { parentPort } from 'node:worker_threads';
import { createDnsResolver, type DnsResolver } from '../domains/dns-lookup.js';
import { cachedResolver } from './dns-cache.js';
import type { ParseReply, ParseRequest, ThreadFailure } from './parse-protocol.js';
import { parseReceived } from './parse-received.js';

const port = parentPort;
if (!port) throw new Error('parse-thread must run in a worker thread');

let judge: { resolver: DnsResolver; authServId: string } | undefined;
const lookups = new Map<number, { resolve(records: unknown): void; reject(error: unknown): void }>();
let nextLookup = 0;

/** The app's resolver, asked through the main thread: each lookup a message, its answer a message. */
const mainResolver: DnsResolver = {
  resolve: (name, rrtype) =>
    new Promise((resolve, reject) => {
      const id = ++nextLookup;
      lookups.set(id, { resolve, reject });
      send({ type: 'dns', id, name, rrtype });
    }),
};

function send(reply: ParseReply): void {
  (port as NonNullable<typeof port>).postMessage(reply);
}

function failure(error: unknown): ThreadFailure {
  const code = (error as { code?: unknown } | null)?.code;
  return {
    ...(typeof code === 'string' ? { code } : {}),
    message: error instanceof Error ? error.message : String(error),
  };
}

port.on('message', (request: ParseRequest) => {
  if (request.type === 'init') {
    judge = {
      authServId: request.authServId,
      resolver: request.dns === 'main' ? mainResolver : cachedResolver(createDnsResolver({ ...request.dns })),
    };
    return;
  }
  if (request.type === 'dns') {
    const waiting = lookups.get(request.id);
    if (!waiting) return;
    lookups.delete(request.id);
    if (request.error) {
      // mailauth reads node's DNS codes (ENOTFOUND, ENODATA): the error keeps its code.
      waiting.reject(Object.assign(new Error(request.error.message), { code: request.error.code }));
    } else waiting.resolve(request.records);
    return;
  }
  const { job, raw, envelope } = request;
  parseReceived(raw, envelope, judge as NonNullable<typeof judge>).then(
    (parsed) => send({ type: 'parsed', job, parsed }),
    (error: unknown) => send({ type: 'failed', job, error: failure(error) }),
  );
});
// The parsers load now, while the thread waits for its first message, not with it.
void Promise.all([import('postal-mime'), import('mailparser'), import('mailauth')]).finally(() =>
  send({ type: 'ready' }),
);
