import { createMailroom, MailroomError, manualClock, warmupDay } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { describe, expect, it } from 'vitest';
import { storeCases } from './support/stores.js';

/**
 * Warm-up with a clock the test controls: a sender domain on day 1 of its schedule sends exactly the
 * day's allowance; the rest waits, unattempted, for the next UTC day and goes then, in the order it came;
 * other sender domains are not held. On the memory store and SQLite (the allowance is counted by the
 * store's shared token counts, as the destination limits are).
 */
const START = new Date('2031-03-03T09:00:00.000Z');
const DAY = 86_400_000;

describe('warm-up schedule', () => {
  it('grows day by day from initial by factor, and ends at the cap', () => {
    const schedule = { start: '2031-03-03', initial: 50, factor: 2, cap: 1_000 };
    const on = (iso: string) => warmupDay(schedule, new Date(iso));
    expect(on('2031-03-01T12:00:00Z')).toMatchObject({ day: 1, allowance: 50 });
    expect(on('2031-03-03T00:00:00Z')).toMatchObject({ day: 1, allowance: 50 });
    expect(on('2031-03-03T23:59:59.999Z')).toMatchObject({
      day: 1,
      allowance: 50,
      nextDayAt: new Date('2031-03-04T00:00:00Z'),
    });
    expect(on('2031-03-04T00:00:00Z')).toMatchObject({ day: 2, allowance: 100 });
    expect(on('2031-03-07T08:00:00Z')).toMatchObject({ day: 5, allowance: 800 });
    expect(on('2031-03-08T08:00:00Z')).toMatchObject({ day: 6, allowance: null });
    expect(() => warmupDay({ start: 'March 3rd' }, START)).toThrow(MailroomError);
    expect(() => warmupDay({ start: '2031-03-03', initial: 0 }, START)).toThrow(/initial/);
    // The engine refuses a bad schedule when it is made, naming the field.
    expect(() =>
      createMailroom({
        store: memoryStore(),
        transport: memoryTransport(),
        warmup: { domains: { 'acme.test': { start: '2031-03-03', factor: 0.5 } } },
      }),
    ).toThrow(/warmup acme\.test: factor/);
  });
});

for (const storeCase of storeCases()) {
  it(`day 1 sends exactly its allowance, the rest goes on day 2 in order (${storeCase.name})`, async () => {
    const clock = manualClock(START);
    const transport = memoryTransport();
    const mailroom = createMailroom({
      store: await storeCase.make(),
      transport,
      clock,
      warmup: { domains: { 'news.acme.test': { start: '2031-03-03', initial: 5, factor: 2 } } },
    });
    try {
      const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
      await mailroom.admin.addSender(project.id, { address: 'hello@news.acme.test' });
      await mailroom.admin.addSender(project.id, { address: 'ops@acme.test' });
      // The domain's view (GET /domains, the dashboard) shows where its warm-up stands.
      await mailroom.addDomain(secret, 'news.acme.test');
      expect((await mailroom.listDomains(secret))[0]?.warmup).toEqual({
        start: '2031-03-03',
        day: 1,
        allowance: 5,
        nextDayAt: new Date('2031-03-04T00:00:00.000Z'),
      });
      const readers = Array.from(
        { length: 12 },
        (_, i) => `reader${String(i).padStart(2, '0')}@example.test`,
      );
      const { ref } = await mailroom.broadcast(secret, {
        subject: 'Hi',
        sender: 'hello@news.acme.test',
        message: 'x',
        recipients: readers,
      });
      // Another sender domain, not warming up: never held.
      await mailroom.send(secret, {
        subject: 'Receipt',
        sender: 'ops@acme.test',
        message: 'x',
        recipients: ['buyer@example.test'],
      });
      await mailroom.worker.drain({ retries: 'leave' });
      const sentTo = () => transport.outbox.map((m) => m.to.address);
      expect(sentTo().filter((a) => a !== 'buyer@example.test')).toHaveLength(5);
      expect(sentTo()).toContain('buyer@example.test');
      let mailing = await mailroom.getMailing(secret, ref);
      expect(mailing.counts).toMatchObject({ sent: 5, queued: 7 });
      // Waiting is not trying: no attempt spent, the reason and the next day's time recorded.
      const waiting = (await mailroom.searchDeliveries(secret, ref, { status: 'queued' })).items;
      // They wait for the next day's start, all due at once: claims then take them by id, in the order
      // they were created, whatever order today's concurrent sends put them back in.
      for (const d of waiting) expect(d.nextAttemptAt).toEqual(new Date('2031-03-04T00:00:00.000Z'));
      for (const d of waiting) {
        expect(d.attempts).toBe(0);
        expect(d.lastError).toMatch(/warm-up of news\.acme\.test: day 1's allowance of 5 is used up/);
      }

      // Later on day 1: still nothing more.
      clock.advance(14 * 3_600_000);
      await mailroom.worker.drain({ retries: 'leave' });
      expect(transport.outbox).toHaveLength(6);

      // Day 2 (allowance 10): the seven that waited go, in the order they came.
      clock.set(new Date('2031-03-04T00:00:01.000Z'));
      await mailroom.worker.drain({ retries: 'leave' });
      mailing = await mailroom.getMailing(secret, ref);
      expect(mailing.counts).toMatchObject({ sent: 12 });
      const broadcastOrder = sentTo().filter((a) => a !== 'buyer@example.test');
      expect(new Set(broadcastOrder)).toEqual(new Set(readers));
      expect(broadcastOrder).toHaveLength(12);
      expect(clock.now().getTime() - START.getTime()).toBeLessThan(DAY);
    } finally {
      await mailroom.close();
    }
  });
}
