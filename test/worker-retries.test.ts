import { createMailroom, type DeliveryRecord, type Mailroom, type WorkerOptions } from '@mailroom/core';
import { type SmtpTransportOptions, smtpTransport } from '@mailroom/smtp';
import { afterEach, describe, expect, it } from 'vitest';
import {
  drop,
  type RawAction,
  type RawSession,
  type RawSmtpScript,
  type RawSmtpServer,
  silent,
  startRawSmtpServer,
} from './support/raw-smtp-server.js';
import { storeCases } from './support/stores.js';

const FAST: WorkerOptions = {
  // MIME built on the main thread, as `'auto'` does on one core: each test's engine would otherwise start a
  // render thread, about a second of CPU from the sources for two messages. What is retried, and with which
  // Message-ID, does not depend on where the bytes are built (test/worker-render-threads.test.ts covers the
  // threads).
  renderThreads: 0,
  retryBaseMs: 20,
  retryMaxMs: 80,
  maxAttempts: 6,
  throttlePauseMs: 30,
  pollMs: 10,
  flushMs: 10,
};

const OK = '250 2.0.0 Ok: queued as RAW';

/** The recipient of a `RCPT TO:<x>` line. */
const rcptOf = (line: string) => /<([^>]*)>/.exec(line)?.[1] ?? '';

/** The Message-ID of a message as the server got it. */
const messageIdOf = (data: Buffer) => /^Message-ID:\s*(<[^>]+>)/im.exec(data.toString('latin1'))?.[1] ?? '';

/** A step that answers `reply` for the first `times` uses per recipient of the session, then the default. */
function firstTimes(
  times: number,
  reply: RawAction,
  fallback: RawAction,
): (line: string, s: RawSession) => RawAction {
  const seen = new Map<string, number>();
  return (line, session) => {
    const rcpt = rcptOf(session.commands.filter((c) => /^RCPT/i.test(c)).at(-1) ?? line);
    const n = (seen.get(rcpt) ?? 0) + 1;
    seen.set(rcpt, n);
    return n <= times ? reply : fallback;
  };
}

describe.each(storeCases())('retries and failures through the engine, on $name', ({ make }) => {
  let server: RawSmtpServer;
  let mailroom: Mailroom;
  let secret: string;
  let projectId: string;

  async function setUp(
    script: RawSmtpScript,
    worker: WorkerOptions = {},
    transport: Partial<SmtpTransportOptions> = {},
  ) {
    server = await startRawSmtpServer(script);
    mailroom = createMailroom({
      store: await make(),
      transport: smtpTransport({ host: server.host, port: server.port, maxConnections: 2, ...transport }),
      worker: { ...FAST, ...worker },
    });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    projectId = created.project.id;
    await mailroom.admin.addSender(projectId, { address: 'news@acme.test' });
  }

  async function broadcast(addresses: string[]): Promise<string> {
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'Hi {{ recipient.firstName }}',
      sender: 'news@acme.test',
      message: 'Hello {{ recipient.firstName }}',
      recipients: addresses,
    });
    return ref;
  }

  /** Runs the worker until the mailing is completed. */
  async function deliver(ref: string, timeoutMs = 15_000): Promise<DeliveryRecord[]> {
    mailroom.worker.start();
    const deadline = Date.now() + timeoutMs;
    while ((await mailroom.getMailing(secret, ref)).status !== 'completed') {
      if (Date.now() > deadline) throw new Error(`${ref} not completed after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
    await mailroom.worker.stop();
    return mailroom.listDeliveries(secret, ref);
  }

  const rcptCount = (address: string) =>
    server.commands.filter((c) => /^RCPT TO/i.test(c) && rcptOf(c) === address).length;
  const arrivals = (address: string) =>
    server.messages.filter((m) => new RegExp(`^To: .*${address}`, 'im').test(m.toString('latin1')));

  afterEach(async () => {
    await mailroom.close();
    await server.close();
  });

  it.each([
    ['450 4.2.1 Mailbox busy', 450],
    ['451 4.3.0 Local error in processing', 451],
    ['452 4.2.2 Insufficient system storage', 452],
  ])('RCPT %s twice: retried, then delivered once the server says 250', async (reply, code) => {
    await setUp({ RCPT: firstTimes(2, reply, '250 2.1.5 Ok') });
    const ref = await broadcast(['a@example.test', 'b@example.test']);
    const deliveries = await deliver(ref);
    for (const d of deliveries) {
      expect(d).toMatchObject({ status: 'sent', attempts: 3, lastResponse: OK, lastError: null });
      expect(rcptCount(d.address)).toBe(3);
      const got = arrivals(d.address);
      expect(got).toHaveLength(1);
      expect(messageIdOf(got[0] as Buffer)).toBe(d.messageId);
    }
    expect(server.dataAttempts).toBe(2);
    expect(code).toBeGreaterThanOrEqual(450);
  });

  it('421 at the greeting: the worker backs off and delivers once the server greets', async () => {
    await setUp({
      GREETING: (_line, session) =>
        session.connection <= 3 ? drop('421 4.7.0 Try again later') : '220 raw.test ESMTP',
    });
    const ref = await broadcast(['a@example.test']);
    const [d] = await deliver(ref);
    expect(d).toMatchObject({ status: 'sent', lastResponse: OK });
    expect(d?.attempts).toBeGreaterThan(1);
    expect(server.connections).toBeGreaterThan(3);
    expect(server.dataAttempts).toBe(1);
    expect(messageIdOf(server.messages[0] as Buffer)).toBe(d?.messageId);
  });

  it('454 on MAIL FROM: retried, then delivered', async () => {
    let mails = 0;
    await setUp({
      MAIL: () => (++mails <= 2 ? '454 4.7.0 Temporary authentication failure' : '250 2.1.0 Ok'),
    });
    const ref = await broadcast(['a@example.test']);
    const [d] = await deliver(ref);
    expect(d).toMatchObject({ status: 'sent', attempts: 3, lastResponse: OK });
    expect(server.messages).toHaveLength(1);
  });

  it('550 5.1.1 on RCPT: bounced after one attempt (a hard bounce, as a DSN says), and the address is suppressed', async () => {
    await setUp({
      RCPT: (line) => (rcptOf(line) === 'gone@example.test' ? '550 5.1.1 No such user' : '250 2.1.5 Ok'),
    });
    const ref = await broadcast(['gone@example.test', 'ok@example.test']);
    const deliveries = await deliver(ref);
    const gone = deliveries.find((d) => d.address === 'gone@example.test');
    expect(gone).toMatchObject({ status: 'bounced', attempts: 1, lastResponse: '550 5.1.1 No such user' });
    expect(rcptCount('gone@example.test')).toBe(1);
    expect(deliveries.find((d) => d.address === 'ok@example.test')?.status).toBe('sent');
    const suppressed = await mailroom.store.findSuppressed(projectId, [
      'gone@example.test',
      'ok@example.test',
    ]);
    expect(suppressed.map((s) => [s.address, s.reason])).toEqual([['gone@example.test', 'hard-bounce']]);
  });

  it.each([['552 5.3.4 Message size exceeds fixed limit'], ['554 5.7.1 Message rejected as spam']])(
    '%s after the data: failed, sent exactly once, not suppressed',
    async (reply) => {
      await setUp({ '.': reply });
      const ref = await broadcast(['a@example.test', 'b@example.test']);
      const deliveries = await deliver(ref);
      for (const d of deliveries) {
        expect(d).toMatchObject({ status: 'failed', attempts: 1, lastResponse: reply });
        expect(rcptCount(d.address)).toBe(1);
      }
      expect(server.dataAttempts).toBe(2);
      expect(await mailroom.store.findSuppressed(projectId, ['a@example.test', 'b@example.test'])).toEqual(
        [],
      );
    },
  );

  it('a silent server times out: retried on a new connection, then delivered', async () => {
    await setUp(
      { GREETING: (_line, session) => (session.connection === 1 ? silent() : '220 raw.test ESMTP') },
      {},
      { greetingTimeout: 200, connectionTimeout: 200, socketTimeout: 500, maxConnections: 1 },
    );
    const ref = await broadcast(['a@example.test']);
    const [d] = await deliver(ref);
    expect(d).toMatchObject({ status: 'sent', lastResponse: OK });
    expect(d?.attempts).toBeGreaterThanOrEqual(2);
    expect(server.messages).toHaveLength(1);
  });

  it('dropped after the final dot, before the 250: retried with the same Message-ID', async () => {
    let dots = 0;
    await setUp({ '.': () => (++dots === 1 ? drop() : OK) });
    const ref = await broadcast(['a@example.test']);
    const [d] = await deliver(ref);
    expect(d).toMatchObject({ status: 'sent', attempts: 2, lastResponse: OK });
    // The server got it twice (the first copy's 250 never left): both copies carry the delivery's Message-ID.
    expect(server.messages).toHaveLength(2);
    expect(server.messages.map(messageIdOf)).toEqual([d?.messageId, d?.messageId]);
  });

  it('a server that never stops saying 451: failed after maxAttempts, each attempt reaching the server', async () => {
    await setUp({ RCPT: '451 4.3.0 Try later' }, { maxAttempts: 3 });
    const ref = await broadcast(['a@example.test']);
    const [d] = await deliver(ref);
    expect(d).toMatchObject({ status: 'failed', attempts: 3, lastResponse: '451 4.3.0 Try later' });
    expect(rcptCount('a@example.test')).toBe(3);
    expect(server.dataAttempts).toBe(0);
  });

  it('maxAgeMs: no retry is scheduled past the age limit', async () => {
    await setUp(
      { RCPT: '451 4.3.0 Try later' },
      { maxAttempts: 100, retryBaseMs: 60, retryMaxMs: 60, maxAgeMs: 150 },
    );
    const ref = await broadcast(['a@example.test']);
    const [d] = await deliver(ref);
    expect(d?.status).toBe('failed');
    expect(d?.lastError).toMatch(/older than 150 ms/);
    expect(d?.attempts).toBeGreaterThanOrEqual(1);
    expect(d?.attempts).toBeLessThan(6);
  });

  it('records outcomes in bulk and emits delivery events after they are durable', async () => {
    await setUp({}, { flushEvery: 10, flushMs: 1_000 });
    const ref = await broadcast(Array.from({ length: 25 }, (_, i) => `u${i}@example.test`));
    const seen: string[] = [];
    mailroom.on('delivery', async (event) => {
      seen.push(event.address);
    });
    const writes: number[] = [];
    const store = mailroom.store;
    const original = store.completeDeliveries.bind(store);
    store.completeDeliveries = async (items) => {
      writes.push(items.length);
      const written = await original(items);
      // An event never announces an outcome the store does not have yet.
      for (const item of items) expect((await store.getDelivery(item.id))?.status).toBe('sent');
      return written;
    };
    const deliveries = await deliver(ref);
    expect(deliveries.every((d) => d.status === 'sent')).toBe(true);
    expect(seen.sort()).toEqual(deliveries.map((d) => d.address).sort());
    expect(writes.reduce((a, b) => a + b, 0)).toBe(25);
    expect(Math.max(...writes)).toBeGreaterThan(1);
  });
});
