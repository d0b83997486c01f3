import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createMailroom,
  type Mailroom,
  MailroomError,
  type ManualClock,
  manualClock,
  type Store,
} from '@mailroom/core';
import { type MemoryTransport, memoryStore, memoryTransport } from '@mailroom/memory';
import { sqlStore } from '@mailroom/sql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/**
 * Scheduled broadcasts with an injected clock, on the memory store and on SQLite: nothing goes out before
 * `scheduleFor`, every recipient gets one message at or after it (across a restart, and however late the
 * worker comes back), and cancel / reschedule do what they say.
 */

const START = new Date('2031-03-01T08:00:00.000Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface StoreCase {
  name: string;
  /** A fresh store, and how to open the same data again as a restarted process would. */
  open: () => { store: Store; reopen: () => Store };
}

const CASES: StoreCase[] = [
  {
    name: 'memory',
    open: () => {
      const store = memoryStore();
      return { store, reopen: () => store };
    },
  },
  {
    name: 'sqlite',
    open: () => {
      const url = join(mkdtempSync(join(tmpdir(), 'mailroom-schedule-')), 'mailroom.db');
      return { store: sqlStore({ url }), reopen: () => sqlStore({ url }) };
    },
  },
];

async function expectCode(promise: Promise<unknown>, code: string, status?: number): Promise<MailroomError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MailroomError);
  expect((error as MailroomError).code).toBe(code);
  if (status !== undefined) expect((error as MailroomError).status).toBe(status);
  return error as MailroomError;
}

describe.each(CASES)('scheduling on $name', ({ name, open }) => {
  let clock: ManualClock;
  let transport: MemoryTransport;
  let mailroom: Mailroom;
  let reopen: () => Store;
  let secret: string;

  const engine = (store: Store) => createMailroom({ store, transport, clock });
  const at = (offsetMs: number) => new Date(START.getTime() + offsetMs).toISOString();
  const recipients = (n: number, prefix = 'r') =>
    Array.from({ length: n }, (_, i) => ({ address: `${prefix}${i}@example.test`, name: `R ${i}` }));
  const body = (scheduleFor: unknown, n = 3) => ({
    subject: 'Scheduled {{ profile.firstName }}',
    sender: 'news@acme.test',
    message: '<p>Hello</p>',
    recipients: recipients(n),
    options: { scheduleFor },
  });

  beforeEach(async () => {
    clock = manualClock(START);
    transport = memoryTransport();
    const opened = open();
    reopen = opened.reopen;
    mailroom = engine(opened.store);
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    await mailroom.admin.addSender(created.project.id, { address: 'news@acme.test' });
  });

  afterEach(async () => {
    await mailroom.close();
  });

  it('accepts ISO-8601 with Z or an offset and refuses anything else with a clear 400', async () => {
    const zulu = await mailroom.broadcast(secret, body('2031-03-01T10:00:00.000Z'));
    expect((await mailroom.getMailing(secret, zulu.ref)).scheduleFor).toEqual(
      new Date('2031-03-01T10:00:00.000Z'),
    );
    const offset = await mailroom.broadcast(secret, body('2031-03-01T11:30:00+01:30'));
    expect((await mailroom.getMailing(secret, offset.ref)).scheduleFor).toEqual(
      new Date('2031-03-01T10:00:00.000Z'),
    );
    for (const bad of [
      '2031-03-01T10:00:00',
      '2031-03-01',
      'tomorrow',
      '2031-02-30T10:00:00Z',
      1_900_000_000_000,
    ]) {
      const error = await expectCode(mailroom.broadcast(secret, body(bad)), 'VALIDATION_FAILED', 400);
      expect(error.issues?.some((i) => i.path.join('.') === 'options.scheduleFor')).toBe(true);
    }
  });

  it('sends nothing before scheduleFor, shows scheduled until then, then sends each recipient once', async () => {
    const { ref, status } = await mailroom.broadcast(secret, body(at(HOUR), 5));
    expect(status).toBe('scheduled');
    await mailroom.worker.drain();
    clock.advance(HOUR - 1);
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(0);
    const waiting = await mailroom.getMailing(secret, ref);
    expect(waiting.status).toBe('scheduled');
    expect(waiting.counts.queued).toBe(5);
    expect(waiting.lateByMs).toBeNull();
    clock.advance(1);
    await mailroom.worker.drain();
    expect(transport.outbox.map((m) => m.to.address).sort()).toEqual(
      recipients(5)
        .map((r) => r.address)
        .sort(),
    );
    const done = await mailroom.getMailing(secret, ref);
    expect(done.status).toBe('completed');
    expect(done.counts.sent).toBe(5);
    expect(done.lateByMs).toBe(0);
    clock.advance(DAY);
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(5);
  });

  it('a restart between accept and the time still sends each recipient exactly once', async () => {
    const { ref } = await mailroom.broadcast(secret, body(at(2 * HOUR), 4));
    if (name !== 'memory') await mailroom.close();
    mailroom = engine(reopen());
    clock.advance(HOUR);
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(0);
    expect((await mailroom.getMailing(secret, ref)).status).toBe('scheduled');
    clock.advance(HOUR);
    await mailroom.worker.drain();
    // And once more, as if a second process came up afterwards.
    if (name !== 'memory') await mailroom.close();
    mailroom = engine(reopen());
    clock.advance(HOUR);
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(4);
    expect(new Set(transport.outbox.map((m) => m.to.address)).size).toBe(4);
    expect((await mailroom.getMailing(secret, ref)).status).toBe('completed');
  });

  it('a time in the past sends now', async () => {
    const { ref, status } = await mailroom.broadcast(secret, body(at(-DAY), 2));
    expect(status).toBe('queued');
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(2);
    const view = await mailroom.getMailing(secret, ref);
    expect(view.status).toBe('completed');
    // Due at accept (the later of scheduleFor and the accept time): not late.
    expect(view.lateByMs).toBe(0);
  });

  it('a worker that was down long past the time still delivers, and the lateness is reported', async () => {
    const { ref } = await mailroom.broadcast(secret, body(at(HOUR), 3));
    clock.advance(HOUR + 3 * DAY);
    const overdue = await mailroom.getMailing(secret, ref);
    expect(overdue.status).toBe('scheduled');
    expect(overdue.lateByMs).toBe(3 * DAY);
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(3);
    clock.advance(HOUR);
    const view = await mailroom.getMailing(secret, ref);
    expect(view.status).toBe('completed');
    // Measured at the first send, not at the time of reading.
    expect(view.lateByMs).toBe(3 * DAY);
  });

  it('a later batch of a scheduled broadcast waits for the same time', async () => {
    const { ref } = await mailroom.broadcast(secret, body(at(HOUR), 2));
    clock.advance(HOUR / 2);
    const later = await mailroom.broadcast(secret, { broadcastRef: ref, recipients: recipients(2, 'late') });
    expect(later.status).toBe('scheduled');
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(0);
    clock.advance(HOUR / 2);
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(4);
  });

  describe('cancel', () => {
    it('cancels a scheduled broadcast: nothing is ever sent and it takes no more batches', async () => {
      const { ref } = await mailroom.broadcast(secret, body(at(HOUR), 4));
      const view = await mailroom.cancel(secret, ref);
      expect(view.status).toBe('cancelled');
      expect(view.counts).toMatchObject({ queued: 0, skipped: 4 });
      const [delivery] = await mailroom.listDeliveries(secret, ref, { limit: 1 });
      expect(delivery?.lastError).toBe('broadcast cancelled');
      clock.advance(2 * HOUR);
      await mailroom.worker.drain();
      expect(transport.outbox).toHaveLength(0);
      await expectCode(
        mailroom.broadcast(secret, { broadcastRef: ref, recipients: recipients(1, 'x') }),
        'BROADCAST_CLOSED',
        409,
      );
      // Cancelling again changes nothing.
      expect((await mailroom.cancel(secret, ref)).status).toBe('cancelled');
      await mailroom.worker.drain();
      expect(transport.outbox).toHaveLength(0);
    });

    it('cancels a running broadcast: what was sent stays sent, the rest is skipped', async () => {
      await mailroom.close();
      const opened = open();
      mailroom = createMailroom({ store: opened.store, transport, clock, worker: { batchSize: 3 } });
      const created = await mailroom.admin.createProject({ name: 'Running' });
      await mailroom.admin.addSender(created.project.id, { address: 'news@acme.test' });
      const { ref } = await mailroom.broadcast(created.secret, body(null, 10));
      expect(await mailroom.worker.runOnce()).toBe(3);
      expect((await mailroom.getMailing(created.secret, ref)).status).toBe('sending');
      const view = await mailroom.cancel(created.secret, ref);
      expect(view.status).toBe('cancelled');
      expect(view.counts).toMatchObject({ sent: 3, skipped: 7, queued: 0, sending: 0 });
      await mailroom.worker.drain();
      expect(transport.outbox).toHaveLength(3);
    });

    it('refuses a completed broadcast, and what is not a broadcast of the project', async () => {
      const { ref } = await mailroom.broadcast(secret, body(null, 1));
      await mailroom.worker.drain();
      await expectCode(mailroom.cancel(secret, ref), 'BROADCAST_CLOSED', 409);
      const message = await mailroom.send(secret, {
        subject: 'One',
        sender: 'news@acme.test',
        message: 'Hi',
        recipients: 'one@example.test',
      });
      await expectCode(mailroom.cancel(secret, message.ref), 'NOT_FOUND', 404);
      const other = await mailroom.admin.createProject({ name: 'Other' });
      await mailroom.admin.addSender(other.project.id, { address: 'news@acme.test' });
      const scheduled = await mailroom.broadcast(secret, body(at(HOUR), 1));
      await expectCode(mailroom.cancel(other.secret, scheduled.ref), 'NOT_FOUND', 404);
      await expectCode(mailroom.reschedule(other.secret, scheduled.ref, at(2 * HOUR)), 'NOT_FOUND', 404);
      expect((await mailroom.getMailing(secret, scheduled.ref)).status).toBe('scheduled');
    });
  });

  describe('reschedule', () => {
    it('moves a scheduled broadcast and its later batches to the new time', async () => {
      const { ref } = await mailroom.broadcast(secret, body(at(HOUR), 2));
      const view = await mailroom.reschedule(secret, ref, at(3 * HOUR));
      expect(view).toMatchObject({ status: 'scheduled', scheduleFor: new Date(at(3 * HOUR)) });
      await mailroom.broadcast(secret, { broadcastRef: ref, recipients: recipients(1, 'late') });
      clock.advance(2 * HOUR);
      await mailroom.worker.drain();
      expect(transport.outbox).toHaveLength(0);
      clock.advance(HOUR);
      await mailroom.worker.drain();
      expect(transport.outbox).toHaveLength(3);
      expect((await mailroom.getMailing(secret, ref)).status).toBe('completed');
    });

    it('can bring a broadcast forward, or to a past time (sends now)', async () => {
      const { ref } = await mailroom.broadcast(secret, body(at(DAY), 2));
      await mailroom.reschedule(secret, ref, new Date(START.getTime() + HOUR));
      clock.advance(HOUR);
      await mailroom.worker.drain();
      expect(transport.outbox).toHaveLength(2);
      const second = await mailroom.broadcast(secret, body(at(DAY), 2));
      const now = await mailroom.reschedule(secret, second.ref, at(-HOUR));
      expect(now.status).toBe('queued');
      // Recorded as due now, not at the past time given.
      expect(now.scheduleFor).toEqual(clock.now());
      await mailroom.worker.drain();
      expect(transport.outbox).toHaveLength(4);
      expect((await mailroom.getMailing(secret, second.ref)).lateByMs).toBe(0);
    });

    it('refuses a broadcast that is no longer scheduled, and a time without a zone', async () => {
      const { ref } = await mailroom.broadcast(secret, body(at(HOUR), 1));
      await expectCode(mailroom.reschedule(secret, ref, '2031-03-01T12:00:00'), 'VALIDATION_FAILED', 400);
      await expectCode(mailroom.reschedule(secret, ref, new Date(Number.NaN)), 'VALIDATION_FAILED', 400);
      await mailroom.cancel(secret, ref);
      await expectCode(mailroom.reschedule(secret, ref, at(2 * HOUR)), 'BROADCAST_CLOSED', 409);
      const running = await mailroom.broadcast(secret, body(null, 1));
      await expectCode(mailroom.reschedule(secret, running.ref, at(2 * HOUR)), 'BROADCAST_CLOSED', 409);
      clock.advance(3 * HOUR);
      await mailroom.worker.drain();
      expect(transport.outbox.map((m) => m.to.address)).toEqual(['r0@example.test']);
    });
  });
});
