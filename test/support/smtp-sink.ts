/**
 * An in-process SMTP server on 127.0.0.1 (random port) that keeps every message it accepts: the raw
 * bytes, the envelope and the `mailparser` parse. For tests of anything that sends mail.
 *
 * ```ts
 * const sink = await startSmtpSink();
 * const transport = smtpTransport({ host: sink.host, port: sink.port });
 * ...
 * const [message] = await sink.waitFor(1);
 * await sink.close();
 * ```
 */
import type { AddressInfo } from 'node:net';
import type { Mailbox } from '@mailroom/core';
import type { ReceivedMessage } from '@mailroom/core/testing';
import { type AddressObject, type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';

/** One message the sink accepted. */
export interface SinkMessage {
  /** The message exactly as it came over DATA (dot-unstuffed). */
  raw: Buffer;
  /** The SMTP envelope. */
  envelope: { mailFrom: string; rcptTo: string[] };
  /** The `mailparser` parse of `raw`. */
  parsed: ParsedMail;
}

/** Options of {@link startSmtpSink}. */
export interface SmtpSinkOptions {
  /** Require AUTH with these credentials (offered in clear text on loopback). */
  auth?: { user: string; pass: string };
  /** Port to listen on (to bring a relay back where it was). @default a random free port */
  port?: number;
  /** Answer RCPT TO for this address with an error, for example `{ code: 550, message: 'No such user' }`. */
  rejectRecipient?: (address: string) => { code: number; message: string } | undefined;
}

/** A running sink. */
export interface SmtpSink {
  /** Always `127.0.0.1`. */
  readonly host: string;
  /** The random port it listens on. */
  readonly port: number;
  /** `smtp://127.0.0.1:<port>` (with the credentials when `auth` is set). */
  readonly url: string;
  /** Messages accepted so far, in arrival order. */
  readonly messages: SinkMessage[];
  /** Connections opened so far. */
  readonly connections: number;
  /** The accepted messages in the conformance kit's shape. */
  received(): Promise<ReceivedMessage[]>;
  /** Resolves once at least `count` messages arrived (all of them), or rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<SinkMessage[]>;
  /** Forgets the accepted messages. */
  clear(): void;
  /** Stops the server and drops open connections. */
  close(): Promise<void>;
}

/** Starts a sink on 127.0.0.1 on a random free port (or `options.port`). */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const messages: SinkMessage[] = [];
  const waiters = new Set<() => void>();
  let connections = 0;
  const notify = () => {
    for (const wake of waiters) wake();
  };

  const server = new SMTPServer({
    // No TLS on loopback: the client would otherwise try STARTTLS against a self-signed certificate.
    disabledCommands: options.auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !options.auth,
    allowInsecureAuth: true,
    logger: false,
    onConnect(_session, callback) {
      connections++;
      callback();
    },
    onAuth(auth, _session, callback) {
      const ok = options.auth && auth.username === options.auth.user && auth.password === options.auth.pass;
      if (ok) callback(null, { user: auth.username });
      else callback(Object.assign(new Error('Invalid credentials'), { responseCode: 535 }));
    },
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      const rejection = options.rejectRecipient?.(address.address);
      if (rejection) callback(Object.assign(new Error(rejection.message), { responseCode: rejection.code }));
      else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', callback);
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        const envelope = {
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
        };
        // Parsed before the 250, so a sender that got its reply finds the message already here.
        simpleParser(raw).then(
          (parsed) => {
            messages.push({ raw, envelope, parsed });
            notify();
            callback(null, `Ok: queued as SINK${messages.length}`);
          },
          (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
        );
      });
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Errors after start (a client that drops mid-session) must not crash the test run.
  server.on('error', () => {});
  const port = (server.server.address() as AddressInfo).port;
  const credentials = options.auth
    ? `${encodeURIComponent(options.auth.user)}:${encodeURIComponent(options.auth.pass)}@`
    : '';

  return {
    host: '127.0.0.1',
    port,
    url: `smtp://${credentials}127.0.0.1:${port}`,
    messages,
    get connections() {
      return connections;
    },
    async received() {
      return messages.map((m) => ({ ...toReceivedMessage(m.parsed), envelopeFrom: m.envelope.mailFrom }));
    },
    waitFor(count, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (messages.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(messages.slice());
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`smtp sink: ${messages.length} of ${count} messages after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    clear() {
      messages.length = 0;
    },
    close() {
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Maps a `mailparser` parse to the conformance kit's {@link ReceivedMessage}. */
export function toReceivedMessage(parsed: ParsedMail): ReceivedMessage {
  const headers: Record<string, string> = {};
  for (const { key, line } of parsed.headerLines) {
    // headerLines keep the folded source line "Name: value"; the kit wants the unfolded value.
    headers[key] = line
      .slice(line.indexOf(':') + 1)
      .replace(/\r?\n[ \t]+/g, ' ')
      .trim();
  }
  const received: ReceivedMessage = {
    messageId: parsed.messageId ?? '',
    from: firstMailbox(parsed.from),
    to: firstMailbox(parsed.to),
    subject: parsed.subject ?? '',
    attachments: parsed.attachments
      .filter((a) => !/^text\/calendar\b/i.test(a.contentType) && !/^application\/ics\b/i.test(a.contentType))
      .map((a) => ({ filename: a.filename ?? '', content: new Uint8Array(a.content) })),
    headers,
  };
  const replyTo = parsed.replyTo?.value[0]?.address;
  if (replyTo) received.replyTo = replyTo;
  // A stored message (an outbox file) carries its envelope sender as Return-Path: <address>.
  const returnPath = /^<([^>]*)>$/.exec(headers['return-path'] ?? '')?.[1];
  if (returnPath !== undefined) received.envelopeFrom = returnPath;
  if (parsed.text !== undefined) received.text = parsed.text;
  if (parsed.html !== false) received.html = parsed.html;
  return received;
}

function firstMailbox(value: AddressObject | AddressObject[] | undefined): Mailbox {
  const first = (Array.isArray(value) ? value[0] : value)?.value[0];
  return { address: first?.address ?? '', name: first?.name ?? '' };
}
