import { createMailroom } from '@mailroom/core';
import { memoryStore, simulatorTransport } from '@mailroom/memory';
import { expect, it } from 'vitest';
import { storeCases } from './support/stores.js';

/**
 * The simulator transport's DSNs and ARF reports (raw MIME, mailed back to each message's envelope
 * sender) fed to `mailroom.inbound.receive`, the path the inbound SMTP listener feeds.
 */
for (const storeCase of storeCases()) {
  it(`simulated async bounces and complaints close the loop (${storeCase.name})`, async () => {
    const transport = simulatorTransport({ reportDelayMs: 5 });
    const mailroom = createMailroom({
      store: storeCase.name === 'memory' ? memoryStore() : await storeCase.make(),
      transport,
      bounces: { domain: 'bounces.acme.test' },
    });
    // As an MTA does, a report deferred (it outran the record of the send) is sent again a little later.
    transport.connect(mailroom);
    try {
      const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
      await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
      const recipients = [
        'async-bounce@simulator.mailroom.test',
        'complaint@simulator.mailroom.test',
        'ok@example.org',
      ];
      const { ref } = await mailroom.broadcast(secret, {
        subject: 'Hi',
        sender: 'news@acme.test',
        message: 'x',
        recipients,
      });
      await mailroom.worker.drain();
      await transport.settled();
      expect(
        transport.reports.map((r) => [r.kind, r.state, r.envelope.envelopeTo[0]?.startsWith('b+')]),
      ).toEqual([
        ['dsn', 'delivered', true],
        ['arf', 'delivered', true],
      ]);
      const counts = (await mailroom.getMailing(secret, ref)).counts;
      expect(counts).toMatchObject({ bounced: 1, complained: 1, sent: 1 });
      const suppressed = await mailroom.store.findSuppressed(project.id, recipients);
      expect(suppressed.map((s) => s.reason).sort()).toEqual(['complaint', 'hard-bounce']);
    } finally {
      await mailroom.close();
    }
  });
}

it('the simulator acts out sender-side refusals: dmarc@ is held until resumed, async-dmarc@ bounces; neither suppresses', async () => {
  const transport = simulatorTransport({ reportDelayMs: 5 });
  const mailroom = createMailroom({
    store: memoryStore(),
    transport,
    bounces: { domain: 'bounces.acme.test' },
  });
  transport.connect(mailroom);
  try {
    const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    const recipients = ['dmarc@simulator.mailroom.test', 'async-dmarc@simulator.mailroom.test'];
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'Hi',
      sender: 'news@acme.test',
      message: 'x',
      recipients,
    });
    await mailroom.worker.drain();
    await transport.settled();
    // dmarc@ is refused at send time as a block of the sender: held (queued) until its destination is resumed.
    expect((await mailroom.getMailing(secret, ref)).counts).toMatchObject({ queued: 1, bounced: 1 });
    expect(await mailroom.store.findSuppressed(project.id, recipients)).toEqual([]);
    const events = (await mailroom.listEvents(secret, { types: ['email.bounced'], limit: 10 })).items;
    expect(
      events
        .map(
          (e) =>
            `${e.data.delivery?.address} ${e.data.bounce?.class} ${e.data.bounce?.reason} ${e.data.bounce?.source}`,
        )
        .sort(),
    ).toEqual([
      'async-dmarc@simulator.mailroom.test sender-side authfailure dsn',
      'dmarc@simulator.mailroom.test sender-side authfailure smtp',
    ]);
  } finally {
    await mailroom.close();
  }
});
