/**
 * A local Amazon SES v2 endpoint for tests: `aws-ses-v2-local` (the emulator) on 127.0.0.1, behind a
 * scripted front on its own loopback port that:
 *
 * - keeps the raw MIME of every `SendEmail` the emulator accepted (the emulator itself keeps only its
 *   parse, without the Message-ID or extra headers), with the `MessageId` it answered;
 * - answers chosen requests with an error SES would give (throttling, a paused account...), which the
 *   emulator can't be told to give;
 * - can be taken down and brought back (connections refused meanwhile).
 *
 * ```ts
 * const ses = await startSesEmulator();
 * const transport = sesTransport({ region: 'us-east-1', endpoint: ses.endpoint, credentials: SES_TEST_CREDENTIALS });
 * ```
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ReceivedMessage } from '@mailroom/core/testing';
import * as emulatorModule from 'aws-ses-v2-local';
import { type ParsedMail, simpleParser } from 'mailparser';
import { toReceivedMessage } from './smtp-sink.js';

/** Dummy credentials: the emulator wants a signed request, never a real key. */
export const SES_TEST_CREDENTIALS = {
  accessKeyId: 'AKIDMAILROOMTEST',
  secretAccessKey: 'mailroom-test-secret',
};

// The SDK must never look for credentials or a region on the network (instance metadata).
process.env.AWS_EC2_METADATA_DISABLED = 'true';

/** An error SES would answer with. */
export interface SesFault {
  /** HTTP status, for example 429. */
  status: number;
  /** The error's name, for example `TooManyRequestsException`. */
  type: string;
  message: string;
}

/** One `SendEmail` the emulator accepted. */
export interface SesSent {
  /** The `MessageId` the emulator answered. */
  sesMessageId: string;
  /** The raw MIME as sent (`Content.Raw.Data`, decoded). */
  raw: Buffer;
  /** The request body, less the raw data. */
  request: { ConfigurationSetName?: string; Destination?: { ToAddresses?: string[] } };
  parsed: ParsedMail;
}

/** A running emulator with its front. */
export interface SesEmulator {
  /** `http://127.0.0.1:<port>` of the front: give it as the transport's `endpoint`. */
  readonly endpoint: string;
  /** The emulator's own address (its `/store`). */
  readonly emulatorUrl: string;
  /** Every accepted send, in order. */
  readonly sent: SesSent[];
  /** `SendEmail` requests that reached the front, accepted or not. */
  readonly requests: number;
  /** Answer each `SendEmail` with the fault this returns for it, if any (by its recipients). */
  fault(script: ((to: string[]) => SesFault | undefined) | undefined): void;
  /** The emulator's stored emails (`GET /store`). */
  store(): Promise<Array<{ messageId: string; subject: string; destination: { to: string[] } }>>;
  /** The sends both the front saw accepted and the emulator keeps, in the conformance kit's shape. */
  received(): Promise<ReceivedMessage[]>;
  /** Resolves once `count` sends were accepted, or rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<SesSent[]>;
  /** Stops the front: connections are refused until {@link SesEmulator.up}. */
  down(): Promise<void>;
  /** Starts the front again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

type StartEmulator = (config?: { host?: string; port?: number }) => Promise<Server>;

/** Starts the emulator and its front, each on a free loopback port. */
export async function startSesEmulator(): Promise<SesEmulator> {
  const start = ((emulatorModule as unknown as { default?: StartEmulator }).default ??
    (emulatorModule as unknown as StartEmulator)) as StartEmulator | { default: StartEmulator };
  const startFn: StartEmulator = typeof start === 'function' ? start : start.default;
  const emulator = await startFn({ host: '127.0.0.1', port: 0 });
  const emulatorPort = (emulator.address() as AddressInfo).port;
  const emulatorUrl = `http://127.0.0.1:${emulatorPort}`;
  // The emulator keeps its store per process: a second emulator of a test file starts empty.
  await fetch(`${emulatorUrl}/clear-store`, { method: 'POST' });
  const sent: SesSent[] = [];
  let requests = 0;
  let script: ((to: string[]) => SesFault | undefined) | undefined;
  const waiters = new Set<() => void>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const isSend = req.method === 'POST' && req.url === '/v2/email/outbound-emails';
    let parsedBody: { Content?: { Raw?: { Data?: string } }; Destination?: { ToAddresses?: string[] } } = {};
    if (isSend) {
      requests++;
      parsedBody = JSON.parse(body.toString('utf8'));
      const fault = script?.(parsedBody.Destination?.ToAddresses ?? []);
      if (fault) {
        res.writeHead(fault.status, {
          'content-type': 'application/json',
          'x-amzn-errortype': `${fault.type}:`,
        });
        res.end(JSON.stringify({ message: fault.message }));
        return;
      }
    }
    const answer = await forward(emulatorPort, req, body);
    if (isSend && answer.status === 200) {
      const { MessageId } = JSON.parse(answer.body.toString('utf8')) as { MessageId: string };
      const raw = Buffer.from(parsedBody.Content?.Raw?.Data ?? '', 'base64');
      const { Content: _content, ...request } = parsedBody;
      sent.push({ sesMessageId: MessageId, raw, request, parsed: await simpleParser(raw) });
      for (const wake of waiters) wake();
    }
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  }

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    });
  };
  let front = createServer(onRequest);
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      front.once('error', reject);
      front.listen(port, '127.0.0.1', () => {
        front.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const port = (front.address() as AddressInfo).port;
  const closeFront = () =>
    new Promise<void>((resolve) => {
      front.close(() => resolve());
      front.closeAllConnections();
    });

  const store = async () => {
    const response = await fetch(`${emulatorUrl}/store`);
    const json = (await response.json()) as {
      emails: Array<{ messageId: string; subject: string; destination: { to: string[] } }>;
    };
    return json.emails;
  };

  return {
    endpoint: `http://127.0.0.1:${port}`,
    emulatorUrl,
    sent,
    get requests() {
      return requests;
    },
    fault(next) {
      script = next;
    },
    store,
    async received() {
      const kept = new Set((await store()).map((e) => e.messageId));
      return sent
        .filter((s) => kept.has(s.sesMessageId))
        .map((s) => {
          const received = toReceivedMessage(s.parsed);
          // Where SES forwards bounce and complaint mail: the request's feedback address, else From.
          const feedback = (s.request as { FeedbackForwardingEmailAddress?: string })
            .FeedbackForwardingEmailAddress;
          return { ...received, envelopeFrom: feedback ?? received.from.address };
        });
    },
    waitFor(count, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (sent.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(sent.slice());
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`ses emulator: ${sent.length} of ${count} messages after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    down: closeFront,
    async up() {
      front = createServer(onRequest);
      await listen(port);
    },
    async close() {
      if (front.listening) await closeFront();
      await new Promise<void>((resolve) => {
        emulator.close(() => resolve());
        emulator.closeAllConnections();
      });
    },
  };
}

/** Sends one request on to the emulator, as it came. */
function forward(
  port: number,
  req: IncomingMessage,
  body: Buffer,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const out = request(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 500, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    out.on('error', reject);
    out.end(body);
  });
}
