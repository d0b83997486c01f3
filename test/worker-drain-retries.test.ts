import { createMailroom, type Mailroom, MailroomError } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { smtpTransport } from '@mailroom/smtp';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from './support/free-port.js';

/**
 * `worker.drain()` in a script (issue 29): send, drain, exit. With the relay unreachable it must not
 * resolve while the message still waits for a retry: it waits for retries that come due within
 * `retryWaitMs`, then rejects naming the transport's error and what waits.
 */
describe('worker.drain() and deliveries waiting for a retry', () => {
  let mailroom: Mailroom | undefined;

  afterEach(async () => {
    await mailroom?.close();
    mailroom = undefined;
  });

  async function setUp(options: Parameters<typeof createMailroom>[0]) {
    mailroom = createMailroom(options);
    const { project, secret } = await mailroom.admin.createProject({ name: 'Script' });
    await mailroom.admin.addSender(project.id, { address: 'app@script.test' });
    const { ref } = await mailroom.send(secret, {
      subject: 'Receipt',
      sender: 'app@script.test',
      message: 'Thanks',
      recipients: 'ada@example.test',
    });
    return { mailroom, secret, ref };
  }

  it('rejects, naming the SMTP error and the delivery waiting, when the relay is unreachable', async () => {
    const port = await freePort();
    const { mailroom, secret, ref } = await setUp({
      store: memoryStore(),
      transport: smtpTransport(`smtp://127.0.0.1:${port}`),
      worker: { renderThreads: 0 },
    });
    const started = performance.now();
    const error = await mailroom.worker.drain({ retryWaitMs: 1_500 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MailroomError);
    const failure = error as MailroomError;
    expect(failure.code).toBe('TRANSPORT_TRANSIENT');
    expect(failure.message).toContain('1 delivery waits for a retry');
    expect(failure.message).toContain('ECONNREFUSED');
    expect(failure.message).toContain(`ada@example.test in ${ref}`);
    expect(failure.message).toContain('worker.start()');
    // It waited for the retries that came due within the bound (1 s, then 2 s with jitter).
    expect(performance.now() - started).toBeGreaterThan(400);
    const mailing = await mailroom.getMailing(secret, ref);
    expect(mailing.status).toBe('sending');
  });

  it('waits for a retry that comes due within the bound and resolves once it is sent', async () => {
    let failures = 2;
    const transport = memoryTransport({
      failWith: () =>
        failures-- > 0
          ? new MailroomError('TRANSPORT_TRANSIENT', 'connect ECONNREFUSED 127.0.0.1:2525')
          : undefined,
    });
    const { mailroom, secret, ref } = await setUp({
      store: memoryStore(),
      transport,
      worker: { retryBaseMs: 100, retryMaxMs: 200 },
    });
    await mailroom.worker.drain();
    expect(transport.lastMessageTo('ada@example.test')?.subject).toBe('Receipt');
    expect((await mailroom.getMailing(secret, ref)).status).toBe('completed');
  });

  it("{ retries: 'leave' } resolves at once and leaves the retry queued", async () => {
    const transport = memoryTransport({
      failWith: () => new MailroomError('TRANSPORT_TRANSIENT', '451 4.3.0 try later', { responseCode: 451 }),
    });
    const { mailroom, secret, ref } = await setUp({
      store: memoryStore(),
      transport,
      worker: { retryBaseMs: 60_000 },
    });
    const started = performance.now();
    await mailroom.worker.drain({ retries: 'leave' });
    expect(performance.now() - started).toBeLessThan(5_000);
    const [delivery] = await mailroom.listDeliveries(secret, ref);
    expect(delivery).toMatchObject({ status: 'queued', attempts: 1 });
  });
});
