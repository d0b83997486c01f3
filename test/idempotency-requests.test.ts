import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createMailroom,
  type Mailroom,
  type MailroomOptions,
  type ManualClock,
  manualClock,
  type Store,
} from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { type MemoryTransport, memoryStore, memoryTransport } from '@mailroom/memory';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

/**
 * Idempotent requests: the `Idempotency-Key` header over HTTP (with real SMTP behind it) and the
 * `idempotencyKey` option of the engine, on the memory store and SQLite.
 */

const SENDER = 'news@acme.test';
const HOUR = 3_600_000;

const broadcastBody = (n = 5, subject = 'Weekly') => ({
  subject,
  sender: SENDER,
  message: '<p>Hello {{ profile.firstName }}</p>',
  recipients: Array.from({ length: n }, (_, i) => ({ address: `user${i}@example.test`, name: `User ${i}` })),
});

describe('Idempotency-Key over HTTP, delivered over SMTP', () => {
  let sink: SmtpSink;
  let mailroom: Mailroom;
  let app: FastifyInstance;
  let url: string;
  let secret: string;
  let projectId: string;

  beforeEach(async () => {
    sink = await startSmtpSink();
    mailroom = createMailroom({
      store: sqlStore({ url: join(mkdtempSync(join(tmpdir(), 'mailroom-idem-')), 'mailroom.db') }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
    });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    projectId = created.project.id;
    await mailroom.admin.addSender(projectId, { address: SENDER });
    app = Fastify();
    await app.register(mailroomPlugin, { mailroom });
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    await app.close();
    await mailroom.close();
    await sink.close();
  });

  function post(path: string, body: unknown, key?: string, auth = secret): Promise<Response> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${auth}`,
      'content-type': 'application/json',
    };
    if (key !== undefined) headers['idempotency-key'] = key;
    return fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  }

  it('50 parallel requests with one key make one broadcast and one set of messages', async () => {
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => post('/send/mail/broadcast', broadcastBody(5), 'launch-2031')),
    );
    const bodies = await Promise.all(
      responses.map(async (r) => ({ status: r.status, res: r, body: await r.json() })),
    );
    const ok = bodies.filter((b) => b.status === 200);
    const refused = bodies.filter((b) => b.status !== 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(
      new Set(ok.map((b) => (b.body as { data: { broadcastRef: string } }).data.broadcastRef)).size,
    ).toBe(1);
    for (const r of refused) {
      expect(r.status).toBe(409);
      expect(r.body).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT', statusCode: 409 });
      expect(r.res.headers.get('retry-after')).toBe('1');
    }
    await mailroom.worker.drain();
    await sink.waitFor(5);
    await new Promise((r) => setTimeout(r, 50));
    expect(sink.messages.map((m) => m.envelope.rcptTo[0]).sort()).toEqual(
      broadcastBody(5).recipients.map((r) => r.address),
    );
    expect(await mailroom.store.listMailings(projectId, 'broadcast', { limit: 10 })).toHaveLength(1);

    // Once done, a repeat answers the first response, marked as a replay, and sends nothing.
    const first = ok.find((b) => b.res.headers.get('idempotent-replayed') === null) ?? ok[0];
    const again = await post('/send/mail/broadcast', broadcastBody(5), 'launch-2031');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(first?.body);
    await mailroom.worker.drain();
    expect(sink.messages).toHaveLength(5);
  });

  it('the same key with another body is a 409; a key is per operation', async () => {
    expect((await post('/send/mail/broadcast', broadcastBody(2), 'k1')).status).toBe(200);
    const other = await post('/send/mail/broadcast', broadcastBody(2, 'Another subject'), 'k1');
    expect(other.status).toBe(409);
    expect(await other.json()).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT' });
    expect(other.headers.get('retry-after')).toBeNull();
    const send = await post('/send/mail', { ...broadcastBody(2) }, 'k1');
    expect(send.status).toBe(409);
  });

  it('keys are 1 to 256 characters; a request refused by validation does not use up its key', async () => {
    const tooLong = await post('/send/mail', broadcastBody(1), 'x'.repeat(257));
    expect(tooLong.status).toBe(400);
    expect(await tooLong.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await post('/send/mail', broadcastBody(1), '')).status).toBe(400);
    expect((await post('/send/mail', broadcastBody(1), 'y'.repeat(256))).status).toBe(200);

    const invalid = await post('/send/mail', { ...broadcastBody(1), subject: undefined }, 'retry-me');
    expect(invalid.status).toBe(400);
    const unknownTemplate = await post(
      '/send/mail',
      { ...broadcastBody(1), message: undefined, template: { ref: 'nope' } },
      'retry-me',
    );
    expect(unknownTemplate.status).toBe(404);
    const fixed = await post('/send/mail', broadcastBody(1), 'retry-me');
    expect(fixed.status).toBe(200);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a later batch under a key is added once', async () => {
    const created = (await (await post('/send/mail/broadcast', broadcastBody(1))).json()) as {
      data: { broadcastRef: string };
    };
    const batch = { broadcastRef: created.data.broadcastRef, recipients: ['late@example.test'] };
    const first = await post('/send/mail/broadast', batch, 'batch-2');
    const second = await post('/send/mail/broadast', batch, 'batch-2');
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(((await second.json()) as { data: { batch: unknown } }).data.batch).toEqual({
      seq: 2,
      recipients: 1,
      inserted: 1,
    });
    const view = await mailroom.getMailing(secret, created.data.broadcastRef);
    expect(view.batchCount).toBe(2);
  });
});

interface StoreCase {
  name: string;
  make: () => Store;
}

const STORES: StoreCase[] = [
  { name: 'memory', make: () => memoryStore() },
  {
    name: 'sqlite',
    make: () => sqlStore({ url: join(mkdtempSync(join(tmpdir(), 'mailroom-idem-')), 'm.db') }),
  },
];

describe.each(STORES)('idempotencyKey in the engine on $name', ({ make }) => {
  let clock: ManualClock;
  let transport: MemoryTransport;
  let mailroom: Mailroom;
  let secret: string;

  async function open(extra: Partial<MailroomOptions> = {}, store: Store = make()): Promise<void> {
    clock = manualClock(new Date('2031-07-01T00:00:00.000Z'));
    transport = memoryTransport();
    mailroom = createMailroom({ store, transport, clock, ...extra });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    await mailroom.admin.addSender(created.project.id, { address: SENDER });
  }

  beforeEach(() => open());
  afterEach(() => mailroom.close());

  it('a repeat answers the first result with replayed: true and sends nothing again', async () => {
    const first = await mailroom.broadcast(secret, broadcastBody(3), { idempotencyKey: 'a' });
    expect(first.replayed).toBeUndefined();
    // The same body with its keys in another order is the same request.
    const { recipients, ...rest } = broadcastBody(3);
    const again = await mailroom.broadcast(secret, { recipients, ...rest }, { idempotencyKey: 'a' });
    expect(again).toEqual({ ...first, replayed: true });
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(3);
    const message = await mailroom.send(secret, broadcastBody(1), { idempotencyKey: 'b' });
    expect(await mailroom.send(secret, broadcastBody(1), { idempotencyKey: 'b' })).toEqual({
      ...message,
      replayed: true,
    });
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(4);
  });

  it('a key is kept 24 hours, then it makes a new request', async () => {
    const first = await mailroom.broadcast(secret, broadcastBody(1), { idempotencyKey: 'daily' });
    clock.advance(24 * HOUR - 1);
    expect((await mailroom.broadcast(secret, broadcastBody(1), { idempotencyKey: 'daily' })).ref).toBe(
      first.ref,
    );
    clock.advance(1);
    const next = await mailroom.broadcast(secret, broadcastBody(1), { idempotencyKey: 'daily' });
    expect(next.ref).not.toBe(first.ref);
    expect(next.replayed).toBeUndefined();
  });

  it('the lifetime is configurable', async () => {
    await mailroom.close();
    await open({ idempotency: { ttlMs: HOUR } });
    const first = await mailroom.send(secret, broadcastBody(1), { idempotencyKey: 'hourly' });
    clock.advance(HOUR);
    expect((await mailroom.send(secret, broadcastBody(1), { idempotencyKey: 'hourly' })).ref).not.toBe(
      first.ref,
    );
    expect(() => createMailroom({ store: make(), transport, idempotency: { ttlMs: 0 } })).toThrow(/ttlMs/);
  });

  it('two projects use the same key independently', async () => {
    const other = await mailroom.admin.createProject({ name: 'Other' });
    await mailroom.admin.addSender(other.project.id, { address: SENDER });
    const mine = await mailroom.broadcast(secret, broadcastBody(2), { idempotencyKey: 'shared' });
    const theirs = await mailroom.broadcast(other.secret, broadcastBody(2), { idempotencyKey: 'shared' });
    expect(theirs.ref).not.toBe(mine.ref);
    expect(theirs.replayed).toBeUndefined();
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(4);
  });

  it('a key whose first request is still running gets a retryable 409', async () => {
    await mailroom.close();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered: () => void = () => {};
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const inner = make();
    const slow = new Proxy(inner, {
      get(target, prop, receiver) {
        if (prop === 'commitBatch') {
          return async (...args: Parameters<Store['commitBatch']>) => {
            entered();
            await gate;
            return target.commitBatch(...args);
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    });
    await open({}, slow);
    const running = mailroom.broadcast(secret, broadcastBody(1), { idempotencyKey: 'slow' });
    await inside;
    await expect(
      mailroom.broadcast(secret, broadcastBody(1), { idempotencyKey: 'slow' }),
    ).rejects.toMatchObject({
      code: 'IDEMPOTENCY_CONFLICT',
      status: 409,
      retryable: true,
      retryAfter: 1,
    });
    release();
    const first = await running;
    expect(await mailroom.broadcast(secret, broadcastBody(1), { idempotencyKey: 'slow' })).toEqual({
      ...first,
      replayed: true,
    });
  });

  it('refuses malformed keys before doing anything', async () => {
    for (const key of ['', 'z'.repeat(257), 'line\nbreak']) {
      await expect(mailroom.send(secret, broadcastBody(1), { idempotencyKey: key })).rejects.toMatchObject({
        code: 'VALIDATION_FAILED',
      });
    }
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(0);
  });
});
