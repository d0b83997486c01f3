import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMailroom, type Mailroom, type ManualClock, manualClock } from '@mailroom/core';
import { mailroomRouter } from '@mailroom/http/express';
import { type MemoryTransport, memoryStore, memoryTransport } from '@mailroom/memory';
import express from 'express';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callApi } from './support/http-harness.js';

/** Scheduling over HTTP (Express): `options.scheduleFor`, then cancel and reschedule by ref. */

const HOUR = 3_600_000;
const START = new Date('2031-09-01T06:00:00.000Z');

describe('scheduled broadcasts over HTTP', () => {
  let clock: ManualClock;
  let transport: MemoryTransport;
  let mailroom: Mailroom;
  let server: Server;
  let base: string;
  let secret: string;
  let otherSecret: string;

  beforeEach(async () => {
    clock = manualClock(START);
    transport = memoryTransport();
    mailroom = createMailroom({ store: memoryStore(), transport, clock });
    for (const name of ['Acme', 'Other']) {
      const created = await mailroom.admin.createProject({ name });
      await mailroom.admin.addSender(created.project.id, { address: 'news@acme.test' });
      if (name === 'Acme') secret = created.secret;
      else otherSecret = created.secret;
    }
    const app = express();
    app.use('/v1', mailroomRouter(mailroom));
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await mailroom.close();
  });

  const call = (path: string, body?: unknown, auth: string | null = secret) =>
    callApi(base, 'POST', path, body, auth);

  async function scheduled(offsetMs: number): Promise<string> {
    const res = await call('/send/mail/broadcast', {
      subject: 'Later',
      sender: 'news@acme.test',
      message: 'Hi',
      recipients: ['a@example.test', 'b@example.test'],
      options: { scheduleFor: new Date(START.getTime() + offsetMs).toISOString() },
    });
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ broadcast: { status: 'scheduled' } });
    return (res.json.data as { broadcastRef: string }).broadcastRef;
  }

  it('reschedules by ref, refusing a time without a zone', async () => {
    const ref = await scheduled(HOUR);
    const bad = await call(`/send/mail/broadcast/${ref}/reschedule`, { scheduleFor: '2031-09-01T09:00:00' });
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe('VALIDATION_FAILED');
    const later = new Date(START.getTime() + 3 * HOUR).toISOString();
    const moved = await call(`/send/mail/broadast/${ref}/reschedule`, { scheduleFor: later });
    expect(moved.status).toBe(200);
    expect(moved.json.data).toEqual({
      broadcast: {
        ref,
        status: 'scheduled',
        scheduleFor: later,
        counts: {
          queued: 2,
          sending: 0,
          sent: 0,
          failed: 0,
          suppressed: 0,
          skipped: 0,
          bounced: 0,
          complained: 0,
        },
      },
      broadcastRef: ref,
    });
    clock.advance(2 * HOUR);
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(0);
    clock.advance(HOUR);
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(2);
  });

  it('cancels by ref (no body needed); a cancelled broadcast takes no batch and sends nothing', async () => {
    const ref = await scheduled(HOUR);
    expect((await call(`/send/mail/broadcast/${ref}/cancel`, undefined, null)).status).toBe(401);
    expect((await call(`/send/mail/broadcast/${ref}/cancel`, undefined, otherSecret)).status).toBe(404);
    const res = await call(`/send/mail/broadcast/${ref}/cancel`);
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ broadcast: { ref, status: 'cancelled', counts: { skipped: 2 } } });
    expect((await call(`/send/mail/broadcast/${ref}/cancel`, {})).status).toBe(200);
    const batch = await call('/send/mail/broadcast', { broadcastRef: ref, recipients: ['c@example.test'] });
    expect(batch.status).toBe(409);
    expect(batch.json.code).toBe('BROADCAST_CLOSED');
    const moved = await call(`/send/mail/broadcast/${ref}/reschedule`, {
      scheduleFor: new Date(START.getTime() + 2 * HOUR).toISOString(),
    });
    expect(moved.status).toBe(409);
    clock.advance(2 * HOUR);
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(0);
    const wrong = await fetch(`${base}/send/mail/broadcast/${ref}/cancel`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
  });
});
