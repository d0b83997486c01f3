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
