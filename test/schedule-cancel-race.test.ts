import { createMailroom, MailroomError } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { describe, expect, it } from 'vitest';
import { storeCases } from './support/stores.js';

// A cancel that races with work already under way: nothing more is sent, and nothing is left waiting.
describe.each(storeCases())('cancel racing the worker on $name', ({ make }) => {
  async function setup(transport = memoryTransport()) {
    const mailroom = createMailroom({ store: await make(), transport, worker: { retryBaseMs: 60_000 } });
    const { project, secret } = await mailroom.admin.createProject({ name: 'P' });
    await mailroom.admin.addSender(project.id, { address: 'news@p.test' });
    return { mailroom, transport, secret, projectId: project.id };
  }

  it('stops the sources of a cancelled broadcast instead of expanding them', async () => {
    const { mailroom, transport, secret, projectId } = await setup();
    await mailroom.admin.createAudienceGroup(projectId, { ref: 'all' });
    const members = Array.from({ length: 1200 }, (_, i) => ({ address: `m${i}@example.test` }));
    for (let i = 0; i < members.length; i += 10) {
      await mailroom.send(secret, {
        subject: 'S',
        sender: 'news@p.test',
        message: 'm',
        recipients: members.slice(i, i + 10),
        options: { acquiringAudience: 'all' },
      });
    }
    await mailroom.worker.drain();
    transport.clear();
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'S',
      sender: 'news@p.test',
      message: 'm',
      sources: [{ config: { ref: 'all' } }],
    });
    await mailroom.cancel(secret, ref);
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(0);
    const mailing = await mailroom.store.getMailing(projectId, ref);
    const [job] = await mailroom.store.listSourceJobs(mailing?.id ?? '');
    expect(job?.status).toBe('failed');
    expect(job?.error).toContain('cancelled');
    expect((await mailroom.getMailing(secret, ref)).counts.queued).toBe(0);
    await mailroom.close();
  });

  it('settles deliveries written back as retries after the cancel', async () => {
    const transport = memoryTransport({
      delayMs: 300,
      failWith: () => new MailroomError('TRANSPORT_TRANSIENT', '451 later', { responseCode: 451 }),
    });
    const { mailroom, secret } = await setup(transport);
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'S',
      sender: 'news@p.test',
      message: 'm',
      recipients: ['a@example.test', 'b@example.test', 'c@example.test'],
    });
    const round = mailroom.worker.runOnce();
    // Cancel while the three sends are in flight; their retry outcomes are written after it.
    await new Promise((r) => setTimeout(r, 100));
    await mailroom.cancel(secret, ref);
    await round;
    const view = await mailroom.getMailing(secret, ref);
    expect(view.status).toBe('cancelled');
    expect(view.counts).toMatchObject({ queued: 0, sending: 0, skipped: 3 });
    await mailroom.close();
  });
});

describe('a broadcast started long after scheduleFor', () => {
  it('still gets its retries: the retry window starts at the first attempt', async () => {
    const { manualClock } = await import('@mailroom/core');
    const { memoryStore } = await import('@mailroom/memory');
    const clock = manualClock(new Date('2030-01-01T00:00:00.000Z'));
    let failures = 2;
    const transport = memoryTransport({
      failWith: () =>
        failures-- > 0
          ? new MailroomError('TRANSPORT_TRANSIENT', '451 later', { responseCode: 451 })
          : undefined,
    });
    const mailroom = createMailroom({
      store: memoryStore(),
      transport,
      clock,
      worker: { maxAgeMs: 3_600_000, retryBaseMs: 1_000, retryMaxMs: 1_000 },
    });
    const { project, secret } = await mailroom.admin.createProject({ name: 'P' });
    await mailroom.admin.addSender(project.id, { address: 'news@p.test' });
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'S',
      sender: 'news@p.test',
      message: 'm',
      recipients: ['late@example.test'],
      options: { scheduleFor: '2030-01-01T01:00:00.000Z' },
    });
    // No worker ran for two days past the scheduled time.
    clock.set(new Date('2030-01-03T01:00:00.000Z'));
    for (let i = 0; i < 3; i++) {
      // The manual clock moves only here: drain leaves the retry for the next round.
      await mailroom.worker.drain({ retries: 'leave' });
      clock.advance(2_000);
    }
    expect(transport.messagesTo('late@example.test')).toHaveLength(1);
    const [delivery] = await mailroom.listDeliveries(secret, ref);
    expect(delivery).toMatchObject({ status: 'sent', attempts: 3 });
    await mailroom.close();
  });
});
