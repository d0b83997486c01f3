import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';
import { sleep, waitUntil } from './support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * Issue 31, "Reputation guard" and "Pause and resume": a relay (smtp-server on loopback) that starts
 * refusing every recipient with a 5.7.1 policy block mid-broadcast. The guard (small thresholds) pauses the
 * broadcast, suppresses nobody, and `broadcast.paused` (with the rule and its figures) reaches a webhook
 * receiver that verifies it with standardwebhooks. Once the relay is fixed, `resumeBroadcast` completes it:
 * every recipient either arrived once at the sink or was refused (recorded, sender-side); none lost, none
 * twice.
 */

const COUNT = 240;
const ADDRESSES = Array.from({ length: COUNT }, (_, i) => `user${String(i).padStart(3, '0')}@example.test`);

describe('the reputation guard pauses a broadcast the relay refuses, and resume completes it', () => {
  let dir: string;
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  let mailroom: Mailroom;
  let refusing = false;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-guard-'));
    sink = await startSmtpSink({
      rejectRecipient: () =>
        refusing ? { code: 550, message: '5.7.1 Message rejected due to local policy (blocked)' } : undefined,
    });
    receiver = await startWebhookReceiver();
    mailroom = createMailroom({
      store: sqlStore({ url: `sqlite:${join(dir, 'mailroom.db')}` }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      fetch: { allowHosts: [receiver.host] },
      worker: { ratePerSecond: 60, batchSize: 10, concurrency: 2, pollMs: 20 },
      // The broadcast's rule at test size; the destination's rule out of the way (it would pause the
      // domain for 30 minutes too, and rightly).
      guard: {
        checkMs: 50,
        broadcast: { senderSideRate: 0.1, senderSideMin: 5 },
        destination: { senderSideMin: 1_000_000 },
      },
    });
  });

  afterAll(async () => {
    await mailroom?.close();
    await receiver?.close();
    await sink?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('pauses within its rule, suppresses none, announces it signed; resume loses and repeats nothing', async () => {
    const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    const added = await mailroom.webhooks.add(secret, {
      url: receiver.url,
      events: ['broadcast.paused', 'broadcast.resumed'],
    });
    receiver.secret = added.secret;
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'Hi',
      sender: 'news@acme.test',
      message: '<p>Hello</p>',
      recipients: ADDRESSES.map((address) => ({ address })),
    });
    mailroom.worker.start();
    await sink.waitFor(40, 30_000);
    refusing = true;
    await waitUntil(async () => (await mailroom.listPauses(secret)).length > 0, 20_000);
    const [paused] = await mailroom.listPauses(secret);
    expect(paused).toMatchObject({ scope: 'broadcast', target: ref, by: 'guard' });
    expect(paused?.rule).toMatchObject({ name: 'broadcast.sender-side', signal: 'sender-side' });
    expect(paused?.rule?.count).toBeGreaterThanOrEqual(5);
    expect(paused?.rule?.rate).toBeGreaterThan(0.1);

    // In flight at the pause: at most one batch; then nothing moves.
    await sleep(500);
    const settled = await mailroom.getMailing(secret, ref);
    await sleep(500);
    const still = await mailroom.getMailing(secret, ref);
    expect(still.counts).toEqual(settled.counts);
    expect(still.counts.queued).toBeGreaterThan(0);
    const refused = still.counts.failed;
    // Within its rule: the pause came before a whole batch more than the minimum was refused.
    expect(refused).toBeLessThan(5 + 2 * 10 + 10);

    // Sender-side refusals never suppress.
    expect(await mailroom.store.findSuppressed(project.id, ADDRESSES)).toEqual([]);

    await receiver.waitFor((r) => r.some((w) => w.payload.type === 'broadcast.paused'), 20_000);
    const hook = receiver.received.find((w) => w.payload.type === 'broadcast.paused');
    expect(hook?.verified).toBe(true);
    expect(hook?.payload.data).toMatchObject({
      mailing: { ref },
      pause: { scope: 'broadcast', target: ref, by: 'guard', rule: { name: 'broadcast.sender-side' } },
    });

    refusing = false;
    await mailroom.resumeBroadcast(secret, ref);
    await waitUntil(async () => (await mailroom.getMailing(secret, ref)).status === 'completed', 60_000);
    const done = await mailroom.getMailing(secret, ref);
    const arrived = sink.messages.flatMap((m) => m.envelope.rcptTo);
    expect(new Set(arrived).size).toBe(arrived.length);
    const failed = (await mailroom.listDeliveries(secret, ref, { status: 'failed', limit: 1000 })).map(
      (d) => d.address,
    );
    expect(failed).toHaveLength(refused);
    expect([...arrived, ...failed].sort()).toEqual([...ADDRESSES].sort());
    expect(done.counts.sent).toBe(COUNT - refused);
    await receiver.waitFor((r) => r.some((w) => w.payload.type === 'broadcast.resumed'), 20_000);
    expect(receiver.received.find((w) => w.payload.type === 'broadcast.resumed')?.verified).toBe(true);
    expect(await mailroom.listPauses(secret)).toEqual([]);
  }, 120_000);
});
