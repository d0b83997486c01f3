import { createMailroom, type DeliveryRecord, type Mailroom, routeTransport, sentVia } from '@mailroom/core';
import { sesTransport } from '@mailroom/ses';
import { smtpTransport } from '@mailroom/smtp';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from './support/free-port.js';
import { SES_TEST_CREDENTIALS, type SesEmulator, startSesEmulator } from './support/ses-emulator.js';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';
import { storeCases } from './support/stores.js';

describe.each(storeCases())('failover from SMTP to SES and back, on $name', ({ make }) => {
  let ses: SesEmulator | undefined;
  let sink: SmtpSink | undefined;
  let mailroom: Mailroom | undefined;

  afterEach(async () => {
    await mailroom?.close();
    await sink?.close();
    await ses?.close();
    mailroom = undefined;
    sink = undefined;
    ses = undefined;
  });

  it('the SMTP primary is down: SES takes over, 0 lost, 0 sent twice; the primary comes back and takes over', async () => {
    ses = await startSesEmulator();
    const smtpPort = await freePort();
    const transport = routeTransport({
      routes: [
        {
          when: { senderDomain: 'acme.test' },
          transport: smtpTransport({ host: '127.0.0.1', port: smtpPort, connectionTimeout: 1000 }),
        },
      ],
      fallback: sesTransport({
        region: 'us-east-1',
        endpoint: ses.endpoint,
        credentials: SES_TEST_CREDENTIALS,
      }),
      failoverMs: 300,
    });
    const engine = createMailroom({
      store: await make(),
      transport,
      worker: { concurrency: 2, retryBaseMs: 50, retryMaxMs: 200, maxAttempts: 8, pollMs: 10, flushMs: 10 },
    });
    mailroom = engine;
    const { secret, project } = await engine.admin.createProject({ name: 'Acme' });
    await engine.admin.addSender(project.id, { address: 'news@acme.test' });

    async function broadcast(prefix: string, count: number): Promise<DeliveryRecord[]> {
      const recipients = Array.from({ length: count }, (_, i) => ({
        address: `${prefix}${i}@example.org`,
        variables: { n: i },
      }));
      const { ref } = await engine.broadcast(secret, {
        subject: 'Issue {{ n }}',
        sender: 'news@acme.test',
        message: 'Hello {{ recipient.email }}',
        recipients,
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

    // 1. The primary refuses connections: the first attempts fail there, their retries and the rest go to SES.
    const down = await broadcast('down', 30);
    expect(down.map((d) => d.status)).toEqual(Array(30).fill('sent'));
    expect(down.every((d) => sentVia(d.lastResponse) === 'ses')).toBe(true);
    // Some deliveries did fail on the primary first, and went to SES on their next attempt.
    expect(down.some((d) => d.attempts >= 2)).toBe(true);
    const sesIds = ses.sent.map((s) => s.parsed.messageId);
    expect(new Set(sesIds).size).toBe(sesIds.length);
    // The same Message-ID as the delivery's, whichever attempt sent it.
    expect(new Set(sesIds)).toEqual(new Set(down.map((d) => d.messageId)));
    expect((await ses.store()).length).toBe(30);

    // 2. The primary comes back: after the failover window the next send probes it and passes (one
    // message, so that nothing runs beside the probe), and from then on the primary has the mail again.
    sink = await startSmtpSink({ port: smtpPort });
    await new Promise((r) => setTimeout(r, 350));
    const [probe] = await broadcast('probe', 1);
    expect(sentVia(probe?.lastResponse)).toBe('smtp');
    const back = await broadcast('back', 30);
    expect(back.map((d) => d.status)).toEqual(Array(30).fill('sent'));
    expect(back.every((d) => sentVia(d.lastResponse) === 'smtp')).toBe(true);
    const smtpIds = sink.messages.map((m) => m.parsed.messageId);
    expect(new Set(smtpIds)).toEqual(new Set([probe?.messageId, ...back.map((d) => d.messageId)]));
    // Nothing was sent twice across both: every Message-ID once, in one place.
    const all = [...ses.sent.map((s) => s.parsed.messageId), ...smtpIds];
    expect(all).toHaveLength(61);
    expect(new Set(all).size).toBe(61);
  });
});
