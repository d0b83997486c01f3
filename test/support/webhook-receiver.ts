/**
 * An HTTP server on 127.0.0.1 (random port) that receives Mailroom's webhooks and verifies every request
 * with the `standardwebhooks` package (never with Mailroom's own code). For tests of events and webhooks.
 *
 * ```ts
 * const receiver = await startWebhookReceiver();
 * const { secret } = await mailroom.webhooks.add(auth, { url: receiver.url });
 * receiver.secret = secret;
 * await receiver.waitFor((r) => r.length >= 3);
 * ```
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got. */
export interface ReceivedWebhook {
  /** The `webhook-id` header. */
  id: string;
  /** The parsed body: `{ type, created_at, data }`. */
  payload: { type: string; created_at: string; data: Record<string, unknown> };
  /** Whether `standardwebhooks` verified the signature with the receiver's `secret`. */
  verified: boolean;
  /** The status the receiver answered. */
  status: number;
  at: number;
  /** The sender's port of the connection it came on (which process sent it, with `/proc`). */
  remotePort: number;
}

/** A running receiver. */
export interface WebhookReceiver {
  /** `http://127.0.0.1:PORT/hook` */
  readonly url: string;
  /** `127.0.0.1:PORT`, for `fetch.allowHosts`. */
  readonly host: string;
  /** The endpoint's `whsec_` secret: requests are verified with it. */
  secret: string | undefined;
  /** The status to answer (default 204), decided per request. */
  respond: (request: { id: string; count: number }) => number;
  /** Every request, in arrival order (retries included). */
  readonly received: ReceivedWebhook[];
  /** Resolves once `ready(received)` is true (polled), or rejects after `timeoutMs`. */
  waitFor(ready: (received: ReceivedWebhook[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts a receiver. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const id = String(req.headers['webhook-id'] ?? '');
      let verified = false;
      let payload: ReceivedWebhook['payload'];
      try {
        if (!receiver.secret) throw new Error('no secret yet');
        payload = new Webhook(receiver.secret).verify(body, headersOf(req)) as ReceivedWebhook['payload'];
        verified = true;
      } catch {
        payload = safeJson(body);
      }
      const status = receiver.respond({ id, count: received.length });
      received.push({
        id,
        payload,
        verified,
        status,
        at: Date.now(),
        remotePort: req.socket.remotePort ?? 0,
      });
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(status < 300 ? 'ok' : 'nope');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}/hook`,
    host: `127.0.0.1:${port}`,
    secret: undefined,
    respond: () => 204,
    received,
    async waitFor(ready, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      while (!ready(received)) {
        if (Date.now() > until)
          throw new Error(`webhook receiver: timed out with ${received.length} requests`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') out[k] = v;
  return out;
}

function safeJson(body: string): ReceivedWebhook['payload'] {
  try {
    return JSON.parse(body) as ReceivedWebhook['payload'];
  } catch {
    return { type: '', created_at: '', data: {} };
  }
}
