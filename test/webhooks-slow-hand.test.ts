import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storeCases } from './support/stores.js';
import { waitUntil } from './support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/** The sender's lease here: the old defect held the healthy endpoint's event for most of it. */
const LEASE_MS = 20_000;
/** The slow endpoint's time to its 200: its claimed hand takes far longer than a lease to send. */
const SLOW_MS = 2_000;

/**
 * A slow endpoint's full hand must not keep another endpoint, with nothing in hand, from its next
 * messages. The slow endpoint gets a first claim of 256 events (a whole hand, far more than it sends in
 * a lease); an event for a second endpoint written then used to wait until the slow endpoint's hand was
 * handed back near the end of its lease (~52 s of a 60 s lease in `webhooks-isolation.test.ts`), since
 * no claim round was due while skipped endpoints filled the hand.
 */
describe.each(storeCases())('a slow endpoint’s full hand on $name', ({ make }) => {
  let mailroom: Mailroom | undefined;
  let receiver: WebhookReceiver;
  let slow: Server;
  let slowUrl: string;
  let slowRequests = 0;

  beforeEach(async () => {
    receiver = await startWebhookReceiver();
    slowRequests = 0;
    slow = createServer((req, res) => {
      slowRequests++;
      req.resume();
      const timer = setTimeout(() => res.writeHead(200).end('ok'), SLOW_MS);
      res.on('close', () => clearTimeout(timer));
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hook`;
  });

  afterEach(async () => {
    await mailroom?.close();
    mailroom = undefined;
    slow.closeAllConnections();
    await new Promise((resolve) => slow.close(resolve));
    await receiver.close();
  });

  it('an idle endpoint’s new event goes out within seconds, not at the end of the slow one’s lease', async () => {
    const engine = createMailroom({
      store: await make(),
      transport: memoryTransport(),
      fetch: { allowHosts: [receiver.host, new URL(slowUrl).host] },
      // 8 places: the slow endpoint's first hand (256) takes ~64 s to send, three times the lease.
      webhooks: { leaseMs: LEASE_MS, timeoutMs: 5_000, concurrency: 8 },
    });
    mailroom = engine;
    const { project, secret } = await engine.admin.createProject({ name: 'Acme' });
    await engine.admin.addSender(project.id, { address: 'news@acme.test' });
    await engine.webhooks.add(secret, { url: slowUrl, events: ['email.sent'] });
    engine.worker.start();
    const recipients = (from: number) =>
      Array.from({ length: 150 }, (_, i) => ({ address: `r${from + i}@example.test` }));
    const { ref } = await engine.broadcast(secret, {
      subject: 'Hi',
      sender: 'news@acme.test',
      message: '<p>Hello</p>',
      recipients: recipients(0),
    });
    await engine.broadcast(secret, { broadcastRef: ref, recipients: recipients(150) });
    // The slow endpoint is sending: its hand holds all it claimed (more than half the sender's hand).
    await waitUntil(() => slowRequests > 0, 20_000);
    const added = await engine.webhooks.add(secret, { url: receiver.url, events: ['email.sent'] });
    receiver.secret = added.secret;
    const sentAt = performance.now();
    await engine.send(secret, {
      subject: 'Reset',
      sender: 'news@acme.test',
      message: '<p>Reset</p>',
      recipients: [{ address: 'reset@example.test' }],
    });
    await receiver.waitFor((r) => r.length >= 1, LEASE_MS);
    const waited = performance.now() - sentAt;
    const [first] = receiver.received;
    expect(first?.verified).toBe(true);
    expect((first?.payload.data.delivery as { address?: string } | undefined)?.address).toBe(
      'reset@example.test',
    );
    // A claim while only skipped endpoints fill the hand comes at least once a second (was ~14 s here:
    // the lease less the 6 s a POST needs, when the slow endpoint's unsent messages went back).
    expect(waited).toBeLessThan(8_000);
  });
});
