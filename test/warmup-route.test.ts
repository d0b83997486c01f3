import { createMailroom, manualClock, routeTransport } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { describe, expect, it } from 'vitest';
import { storeCases } from './support/stores.js';

/**
 * Warm-up per transport route (issue 31, "a schedule per sender domain (and per transport route)"), with a
 * clock the test controls: broadcasts go through a new route (`new-ip`, a relay on a fresh IP) while
 * transactional mail keeps the old one (the fallback). On day 1 the route sends exactly its allowance,
 * the rest waits, unattempted, for the next UTC day and goes then; the same sender's transactional mail,
 * on the other route, is never held. On the memory store and SQLite (the store's shared token counts).
 */
const START = new Date('2031-03-03T09:00:00.000Z');

describe('warm-up per route: the schedule', () => {
  it('is refused at start when it names no route of the transport, or has a bad field', () => {
    const transport = routeTransport({
      routes: [{ name: 'new-ip', when: { kind: 'broadcast' }, transport: memoryTransport() }],
      fallback: memoryTransport(),
    });
    const make = (routes: Record<string, { start: string; factor?: number }>) => () =>
      createMailroom({ store: memoryStore(), transport, warmup: { routes } });
    expect(make({ 'old-ip': { start: '2031-03-03' } })).toThrow(
      /warmup route old-ip: the transport has no route/,
    );
    expect(make({ 'new-ip': { start: '2031-03-03', factor: 0.5 } })).toThrow(/warmup route new-ip: factor/);
    expect(make({ 'new-ip': { start: '2031-03-03' } })).not.toThrow();
    // A transport without routes has no route to warm up.
    expect(() =>
      createMailroom({
        store: memoryStore(),
        transport: memoryTransport(),
        warmup: { routes: { 'new-ip': { start: '2031-03-03' } } },
      }),
    ).toThrow(/no route of that name/);
    expect(() =>
      routeTransport({
        routes: [
          { name: 'a', when: {}, transport: memoryTransport() },
          { name: 'a', when: {}, transport: memoryTransport() },
        ],
      }),
    ).toThrow(/unique/);
  });
});

for (const storeCase of storeCases()) {
  it(`day 1 sends exactly the route's allowance, the rest goes on day 2; other routes never held (${storeCase.name})`, async () => {
    const clock = manualClock(START);
    const newIp = memoryTransport();
    const oldIp = memoryTransport();
    const mailroom = createMailroom({
      store: await storeCase.make(),
      transport: routeTransport({
        routes: [{ name: 'new-ip', when: { kind: 'broadcast' }, transport: newIp }],
        fallback: oldIp,
      }),
      clock,
      warmup: { routes: { 'new-ip': { start: '2031-03-03', initial: 5, factor: 2 } } },
    });
    try {
      const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
      await mailroom.admin.addSender(project.id, { address: 'hello@acme.test' });
      const readers = Array.from(
        { length: 12 },
        (_, i) => `reader${String(i).padStart(2, '0')}@example.test`,
      );
      const { ref } = await mailroom.broadcast(secret, {
        subject: 'Hi',
        sender: 'hello@acme.test',
        message: 'x',
        recipients: readers,
      });
      const receipts = Array.from({ length: 8 }, (_, i) => `buyer${i}@example.test`);
      for (const address of receipts) {
        await mailroom.send(secret, {
          subject: 'Receipt',
          sender: 'hello@acme.test',
          message: 'x',
          recipients: address,
        });
      }
      await mailroom.worker.drain({ retries: 'leave' });
      expect(newIp.outbox).toHaveLength(5);
      // The same sender, another route: all sent on day 1.
      expect(oldIp.outbox.map((m) => m.to.address).sort()).toEqual(receipts);
      let mailing = await mailroom.getMailing(secret, ref);
      expect(mailing.counts).toMatchObject({ sent: 5, queued: 7 });
      const waiting = (await mailroom.searchDeliveries(secret, ref, { status: 'queued' })).items;
      expect(waiting).toHaveLength(7);
      for (const d of waiting) {
        expect(d.attempts).toBe(0);
        expect(d.nextAttemptAt).toEqual(new Date('2031-03-04T00:00:00.000Z'));
        expect(d.lastError).toMatch(/warm-up of route new-ip: day 1's allowance of 5 is used up/);
      }

      // Later on day 1: still nothing more.
      clock.advance(14 * 3_600_000);
      await mailroom.worker.drain({ retries: 'leave' });
      expect(newIp.outbox).toHaveLength(5);

      // Day 2 (allowance 10): the seven that waited go, through the route.
      clock.set(new Date('2031-03-04T00:00:01.000Z'));
      await mailroom.worker.drain({ retries: 'leave' });
      mailing = await mailroom.getMailing(secret, ref);
      expect(mailing.counts).toMatchObject({ sent: 12 });
      expect(newIp.outbox.map((m) => m.to.address).sort()).toEqual(readers);
      expect(oldIp.outbox).toHaveLength(receipts.length);
    } finally {
      await mailroom.close();
    }
  });
}
