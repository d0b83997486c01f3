import { createMailroom, MailroomError, type Store } from '@mailroom/core';
import { signClickToken, signOpenToken } from '@mailroom/core/testing';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { describe, expect, it, vi } from 'vitest';

/**
 * Hits are written behind the answer: the answer never waits for the store, and a store that fails for a
 * while loses no hit (they are written once it answers again).
 */
describe('tracking hits written behind', () => {
  it('answers while the store fails, and writes the hits once it is back', async () => {
    const inner = memoryStore();
    let failing = true;
    const store: Store = {
      ...inner,
      recordTrackingHits: (hits) =>
        failing
          ? Promise.reject(new MailroomError('STORE_FAILED', 'down (test)'))
          : inner.recordTrackingHits(hits),
    };
    const mailroom = createMailroom({
      store,
      transport: memoryTransport(),
      tracking: {
        baseUrl: 'https://t.example.test',
        opens: true,
        clicks: true,
        flushMs: 10,
        scannerWindowMs: 0,
      },
    });
    const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'Hi',
      sender: 'news@acme.test',
      message: '<p><a href="https://a.example.test/">a</a></p>',
      recipients: 'ann@example.test',
    });
    await mailroom.worker.drain();
    const mailing = await store.getMailing(project.id, ref);
    const [delivery] = await store.listDeliveries(mailing?.id ?? '', { limit: 1 });
    const key = await store.ensureSetting('tracking-secret', 'unused-unused-unused', new Date());
    const fields = {
      projectId: project.id,
      mailingId: mailing?.id ?? '',
      deliveryId: delivery?.id ?? '',
      sentAt: 1,
    };
    const meta = { userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0' };
    expect(await mailroom.trackClick(signClickToken(key, { ...fields, index: 0 }), meta)).toBe(
      'https://a.example.test/',
    );
    await mailroom.trackOpen(signOpenToken(key, fields), meta);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await mailroom.getTracking(secret, ref)).clickTotals.human).toBe(0);
    failing = false;
    await vi.waitFor(
      async () => {
        const tracking = await mailroom.getTracking(secret, ref);
        expect(tracking.clickTotals.human).toBe(1);
        expect(tracking.opens.human).toBe(1);
      },
      { timeout: 5_000, interval: 20 },
    );
    await mailroom.close();
  });
});
