import { createMailroom, type DeliveryRecord, type Mailroom, type WorkerOptions } from '@mailroom/core';
import { memoryStore } from '@mailroom/memory';
import { sesTransport } from '@mailroom/ses';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SES_TEST_CREDENTIALS, type SesEmulator, startSesEmulator } from './support/ses-emulator.js';

describe('the engine on sesTransport (aws-ses-v2-local on loopback)', () => {
  let ses: SesEmulator;
  let mailroom: Mailroom | undefined;

  beforeAll(async () => {
    ses = await startSesEmulator();
  });
  afterAll(async () => {
    await ses.close();
  });
  afterEach(async () => {
    ses.fault(undefined);
    await mailroom?.close();
    mailroom = undefined;
  });

  async function broadcastThrough(worker: WorkerOptions, count: number): Promise<DeliveryRecord[]> {
    const engine = createMailroom({
      store: memoryStore(),
      transport: sesTransport({
        region: 'us-east-1',
        endpoint: ses.endpoint,
        credentials: SES_TEST_CREDENTIALS,
      }),
      worker: { pollMs: 10, flushMs: 10, ...worker },
    });
    mailroom = engine;
    const { secret, project } = await engine.admin.createProject({ name: 'Acme' });
    await engine.admin.addSender(project.id, { address: 'news@acme.test' });
    const { ref } = await engine.broadcast(secret, {
      sender: 'news@acme.test',
      subject: 'Hello {{ recipient.firstName }}',
      message: '<p>Hi {{ recipient.firstName }}</p>',
      recipients: Array.from({ length: count }, (_, i) => ({
        address: `r${i}@example.org`,
        name: `Reader${i} X`,
      })),
    });
    engine.worker.start();
    const deadline = Date.now() + 30_000;
    while ((await engine.getMailing(secret, ref)).status !== 'completed') {
      if (Date.now() > deadline) throw new Error(`${ref} not completed`);
      await new Promise((r) => setTimeout(r, 20));
    }
    await engine.worker.stop();
    return engine.listDeliveries(secret, ref);
  }

  it('a paused account: the worker waits the pause out and no delivery fails, even with one attempt allowed', async () => {
    let paused = 3;
    ses.fault(() =>
      paused-- > 0
        ? { status: 400, type: 'SendingPausedException', message: 'Sending is paused for this account.' }
        : undefined,
    );
    const before = ses.sent.length;
    const deliveries = await broadcastThrough({ maxAttempts: 1, transportPauseMs: 50, concurrency: 4 }, 10);
    expect(deliveries.map((d) => d.status)).toEqual(Array(10).fill('sent'));
    expect(ses.sent.length - before).toBe(10);
    expect(new Set(ses.sent.slice(before).map((s) => s.parsed.messageId)).size).toBe(10);
    expect(deliveries.every((d) => /^ses: 250 Ok ses-\d+$/.test(d.lastResponse ?? ''))).toBe(true);
  });

  it('throttled: retried with the worker slowing down, every message sent once', async () => {
    let throttled = 4;
    ses.fault(() =>
      throttled-- > 0
        ? { status: 429, type: 'TooManyRequestsException', message: 'Maximum sending rate exceeded.' }
        : undefined,
    );
    const before = ses.sent.length;
    const deliveries = await broadcastThrough(
      { maxAttempts: 8, retryBaseMs: 20, retryMaxMs: 50, throttlePauseMs: 20, concurrency: 4 },
      10,
    );
    expect(deliveries.map((d) => d.status)).toEqual(Array(10).fill('sent'));
    expect(deliveries.some((d) => d.attempts > 1)).toBe(true);
    expect(new Set(ses.sent.slice(before).map((s) => s.parsed.messageId)).size).toBe(10);
    expect(ses.sent.length - before).toBe(10);
  });

  it('builds the MIME on render threads with the SMTP composer and sends the bytes through SES', async () => {
    const before = ses.sent.length;
    const deliveries = await broadcastThrough({ renderThreads: 2 }, 6);
    expect(deliveries.map((d) => d.status)).toEqual(Array(6).fill('sent'));
    const sent = ses.sent.slice(before);
    expect(sent.map((s) => s.parsed.subject).sort()).toEqual(
      Array.from({ length: 6 }, (_, i) => `Hello Reader${i}`).sort(),
    );
    expect(new Set(sent.map((s) => s.parsed.messageId))).toEqual(new Set(deliveries.map((d) => d.messageId)));
  });
});
