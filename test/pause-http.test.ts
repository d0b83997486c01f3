import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callApi, listenMailroom } from './support/http-harness.js';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';
import { sleep, waitUntil } from './support/wait.js';

/**
 * Issue 31 "Deliverability control", pause and resume over HTTP (pause-routes.ts), through both binders:
 * the answers and refusals of every route, then a real broadcast to an smtp-server sink paused and resumed
 * over the API mid-delivery: nothing sent while paused, none lost, none twice, both events written.
 */

interface PauseWire {
  scope: string;
  target: string;
  domains: string[];
  by: string;
  reason: string | null;
  until: string | null;
}
type PausesAnswer = { data: { pauses: PauseWire[] }; message: string; code?: string; issues?: unknown[] };

const BROADCAST = {
  subject: 'News',
  sender: 'news@acme.test',
  message: '<p>Hello</p>',
};

describe.each(['express', 'fastify'] as const)('pause routes (%s)', (binder) => {
  let mailroom: Mailroom;
  let base: string;
  let close: () => Promise<void>;
  let secret: string;
  let reader: string;

  beforeAll(async () => {
    mailroom = createMailroom({ store: memoryStore(), transport: memoryTransport() });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(created.project.id, { address: 'news@acme.test' });
    secret = created.secret;
    reader = (await mailroom.keys.create(secret, { scope: 'read' })).secret;
    ({ url: base, close } = await listenMailroom(binder, mailroom));
  });
  afterAll(async () => {
    await close();
    await mailroom.close();
  });

  const call = (method: string, path: string, body?: unknown, key: string | null = secret) =>
    callApi<PausesAnswer>(base, method, path, body, key);

  it('pauses and resumes the sending, with the reason shown, in the envelope', async () => {
    expect((await call('GET', '/pauses', undefined, reader)).json.data.pauses).toEqual([]);
    const paused = await call('POST', '/sending/pause', { reason: 'list audit' });
    expect(paused.status).toBe(200);
    expect(paused.json).toMatchObject({ statusCode: 200, message: expect.stringContaining('paused') });
    expect(paused.json.data.pauses).toEqual([
      expect.objectContaining({ scope: 'project', by: 'operator', reason: 'list audit', until: null }),
    ]);
    // A read key lists what is paused.
    expect((await call('GET', '/pauses', undefined, reader)).json.data.pauses).toHaveLength(1);
    // A read key may not change it.
    expect((await call('POST', '/sending/resume', undefined, reader)).status).toBe(403);
    const resumed = await call('POST', '/sending/resume');
    expect(resumed.status).toBe(200);
    expect(resumed.json.data.pauses).toEqual([]);
  });

  it('pauses a destination for some minutes over a group of domains, and resumes it', async () => {
    const before = Date.now();
    const paused = await call('POST', '/destinations/Microsoft/pause', {
      minutes: 30,
      domains: ['outlook.com', 'hotmail.com'],
      reason: 'throttled',
    });
    expect(paused.status).toBe(200);
    const [pause] = paused.json.data.pauses;
    expect(pause).toMatchObject({
      scope: 'destination',
      target: 'microsoft',
      domains: ['outlook.com', 'hotmail.com'],
      reason: 'throttled',
    });
    const until = Date.parse(pause?.until ?? '');
    expect(until - before).toBeGreaterThanOrEqual(30 * 60_000 - 1000);
    expect(until - before).toBeLessThan(31 * 60_000);
    // No body at all: the destination is its own domain, until resumed.
    const plain = await call('POST', '/destinations/gmail.com/pause');
    expect(plain.json.data.pauses).toContainEqual(
      expect.objectContaining({ target: 'gmail.com', domains: ['gmail.com'], until: null }),
    );
    await call('POST', '/destinations/gmail.com/resume');
    const resumed = await call('POST', '/destinations/microsoft/resume');
    expect(resumed.json.data.pauses).toEqual([]);
  });

  it('refuses an unknown field by name, a bad value, an unknown broadcast and a cancelled one', async () => {
    const unknown = await call('POST', '/destinations/gmail.com/pause', { minutes: 5, hours: 1 });
    expect(unknown.status).toBe(400);
    expect(unknown.json.code).toBe('VALIDATION_FAILED');
    expect(unknown.json.message).toContain('`hours`');
    expect(unknown.json.issues).toEqual([expect.objectContaining({ path: ['hours'] })]);
    // The sending takes only a reason.
    const extra = await call('POST', '/sending/pause', { minutes: 5 });
    expect(extra.status).toBe(400);
    expect(extra.json.message).toContain('`minutes`');
    for (const minutes of [0, 1.5, -3, 43_201, '10']) {
      const bad = await call('POST', '/destinations/gmail.com/pause', { minutes });
      expect(bad.status, String(minutes)).toBe(400);
      expect(bad.json.issues).toEqual([expect.objectContaining({ path: ['minutes'] })]);
    }
    const badName = await call('POST', `/destinations/${encodeURIComponent('a b')}/pause`);
    expect(badName.status).toBe(400);
    const notObject = await call('POST', '/sending/pause', [1]);
    expect(notObject.status).toBe(400);
    const malformed = await call('POST', '/sending/pause', '{');
    expect(malformed.json.code).toBe('MALFORMED_JSON');
    expect((await call('POST', '/broadcasts/bc_nothing/pause')).status).toBe(404);
    expect((await call('POST', '/broadcasts/bc_nothing/resume')).status).toBe(404);
    // A message is no broadcast.
    const message = await mailroom.send(secret, { ...BROADCAST, recipients: 'a@b.test' });
    expect((await call('POST', `/broadcasts/${message.ref}/pause`)).status).toBe(404);

    const { ref } = await mailroom.broadcast(secret, {
      ...BROADCAST,
      recipients: [{ address: 'a@b.test' }],
      options: { scheduleFor: new Date(Date.now() + 86_400_000).toISOString() },
    });
    await mailroom.cancel(secret, ref);
    const closed = await call('POST', `/broadcasts/${ref}/pause`);
    expect(closed.status).toBe(409);
    expect(closed.json.code).toBe('BROADCAST_CLOSED');
    expect(closed.json.message).toContain('cancelled');
    expect((await call('GET', '/pauses')).json.data.pauses).toEqual([]);
    // Nothing was paused by the refusals above.
    expect(await mailroom.listPauses(secret)).toEqual([]);
  });
});

describe.each(['express', 'fastify'] as const)('a broadcast paused and resumed over HTTP (%s)', (binder) => {
  const COUNT = 120;
  const ADDRESSES = Array.from({ length: COUNT }, (_, i) => `user${String(i).padStart(3, '0')}@example.test`);
  let dir: string;
  let sink: SmtpSink;
  let mailroom: Mailroom;
  let base: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-pause-http-'));
    sink = await startSmtpSink();
    mailroom = createMailroom({
      store: sqlStore({ url: `sqlite:${join(dir, 'mailroom.db')}` }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      worker: { ratePerSecond: 60, batchSize: 10, concurrency: 2, pollMs: 20 },
    });
    ({ url: base, close } = await listenMailroom(binder, mailroom));
  });
  afterAll(async () => {
    await close();
    await mailroom?.close();
    await sink?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends nothing while paused, then every recipient exactly once; both events written', async () => {
    const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    const { ref } = await mailroom.broadcast(secret, {
      ...BROADCAST,
      recipients: ADDRESSES.map((address) => ({ address })),
    });
    mailroom.worker.start();
    await sink.waitFor(20, 30_000);

    const paused = await callApi<PausesAnswer>(
      base,
      'POST',
      `/broadcasts/${ref}/pause`,
      { reason: 'typo' },
      secret,
    );
    expect(paused.status).toBe(200);
    expect(paused.json.data.pauses).toEqual([
      expect.objectContaining({ scope: 'broadcast', target: ref, by: 'operator', reason: 'typo' }),
    ]);
    // Deliveries in flight finish (at most a batch per worker); then nothing moves.
    await sleep(600);
    const atPause = sink.messages.length;
    await sleep(800);
    expect(sink.messages.length).toBe(atPause);
    expect(atPause).toBeLessThan(COUNT);
    const view = await mailroom.getMailing(secret, ref);
    expect(view.status).toBe('sending');
    expect(view.counts.queued).toBe(COUNT - atPause);

    const resumed = await callApi<PausesAnswer>(base, 'POST', `/broadcasts/${ref}/resume`, undefined, secret);
    expect(resumed.status).toBe(200);
    expect(resumed.json.data.pauses).toEqual([]);
    await waitUntil(async () => (await mailroom.getMailing(secret, ref)).status === 'completed', 60_000);
    const arrived = sink.messages.flatMap((m) => m.envelope.rcptTo);
    expect(arrived).toHaveLength(COUNT);
    expect([...arrived].sort()).toEqual(ADDRESSES);

    const events = await callApi<{
      data: { events: Array<{ type: string; data: Record<string, unknown> }> };
    }>(base, 'GET', `/events?types=broadcast.paused,broadcast.resumed&mailingRef=${ref}`, undefined, secret);
    expect(events.json.data.events.map((e) => e.type)).toEqual(['broadcast.paused', 'broadcast.resumed']);
    expect(events.json.data.events[0]?.data).toMatchObject({
      pause: { scope: 'broadcast', target: ref, by: 'operator', reason: 'typo' },
    });
  }, 90_000);
});
