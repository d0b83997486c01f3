/**
 * Keys over HTTP (Fastify on loopback): a secret shown once and never listed or logged; a `sending` key limited
 * to a domain refused for another sender, naming the field; rotation's grace on the engine's clock; the last
 * use written at most once a minute; wrong keys limited per client address (429 with Retry-After) without
 * touching correct keys from another address or before the limit; the limiter's memory bound.
 */
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMailroom, type Logger, type Mailroom, MailroomError, type Store } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createAuthFailureLimit } from '../packages/http/src/limits/auth-failure-limit.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: {
    message: string;
    code?: string;
    issues?: Array<{ path: unknown[] }>;
    data: Record<string, unknown>;
  };
}

let now = Date.parse('2031-05-01T08:00:00.000Z');
let mailroom: Mailroom;
let close: (() => Promise<void>) | undefined;
let port: number;
let projectId: string;
let secret: string;
let touches: number;
const logged: string[] = [];

const captureLogger: Logger = {
  debug: (obj, msg) => logged.push(JSON.stringify(obj) + (msg ?? '')),
  info: (obj, msg) => logged.push(JSON.stringify(obj) + (msg ?? '')),
  warn: (obj, msg) => logged.push(JSON.stringify(obj) + (msg ?? '')),
  error: (obj, msg) => logged.push(JSON.stringify(obj) + (msg ?? '')),
};

async function start(httpOptions: Record<string, unknown> = {}): Promise<void> {
  const store: Store = memoryStore();
  const touchKey = store.touchKey.bind(store);
  touches = 0;
  store.touchKey = (id, at) => {
    touches += 1;
    return touchKey(id, at);
  };
  mailroom = createMailroom({
    store,
    transport: memoryTransport(),
    clock: { now: () => new Date(now) },
    logger: captureLogger,
  });
  const created = await mailroom.admin.createProject({ name: 'Acme' });
  secret = created.secret;
  projectId = created.project.id;
  await mailroom.admin.addSender(created.project.id, { address: 'news@acme.test' });
  const app = Fastify();
  await app.register(mailroomPlugin, { prefix: '/v1', mailroom, logger: captureLogger, ...httpOptions });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
  close = () => app.close();
}

afterEach(async () => {
  if (close) {
    await close();
    await mailroom.close();
  }
  close = undefined;
  logged.length = 0;
});

/** One request to the server on 127.0.0.1, sent from `from` (any loopback address). */
function call(
  method: string,
  path: string,
  options: { key?: string | null; body?: unknown; from?: string } = {},
): Promise<Answer> {
  const key = options.key === undefined ? secret : options.key;
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: `/v1${path}`,
        localAddress: options.from ?? '127.0.0.1',
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: text ? JSON.parse(text) : {},
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const SEND = { subject: 'Hi', message: 'Hello', recipients: 'a@b.test' };

describe('keys over HTTP', () => {
  it('shows a new key secret once: in the create answer, never in the list nor the logs', async () => {
    await start();
    now += 1000;
    const created = await call('POST', '/keys', { body: { scope: 'read' } });
    expect(created.status).toBe(200);
    const newSecret = created.json.data.secret as string;
    expect(newSecret).toMatch(/^sk_live_/);
    const listed = await call('GET', '/keys');
    expect(listed.status).toBe(200);
    const keys = listed.json.data.keys as Array<Record<string, unknown>>;
    expect(keys.map((k) => k.scope)).toEqual(['full', 'read']);
    expect(keys[1]).toMatchObject({ prefix: newSecret.slice(0, 12), domains: [], state: 'active' });
    expect(listed.text).not.toContain(newSecret);
    expect(listed.text).not.toContain(secret);
    expect(listed.text).not.toContain('hash');
    // Used once: the new key can read, and nothing logged holds either secret.
    expect((await call('GET', '/keys', { key: newSecret })).status).toBe(200);
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.join('\n')).not.toContain(newSecret);
    expect(logged.join('\n')).not.toContain(secret);
  });

  it('refuses an unknown scope and an unknown field with 400 naming the field', async () => {
    await start();
    const scope = await call('POST', '/keys', { body: { scope: 'admin' } });
    expect(scope.status).toBe(400);
    expect(scope.json.issues?.[0]?.path).toEqual(['scope']);
    const field = await call('POST', '/keys', { body: { scope: 'read', admin: true } });
    expect(field.status).toBe(400);
    expect(field.json.issues?.[0]?.path).toEqual(['admin']);
    const domain = await call('POST', '/keys', { body: { scope: 'sending', domains: ['not a domain'] } });
    expect(domain.status).toBe(400);
    expect(domain.json.issues?.[0]?.path).toEqual(['domains', 0]);
  });

  it('a sending key limited to example.com sends from @example.com only: 403 naming the sender otherwise', async () => {
    await start();
    await mailroom.admin.addSender(projectId, { address: 'news@example.com' });
    const created = await call('POST', '/keys', { body: { scope: 'sending', domains: ['Example.COM'] } });
    const key = created.json.data.secret as string;
    expect((created.json.data.key as { domains: string[] }).domains).toEqual(['example.com']);
    const refused = await call('POST', '/send/mail', { key, body: { ...SEND, sender: 'news@acme.test' } });
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe('SENDER_NOT_ALLOWED');
    expect(refused.json.message).toContain('sender');
    expect(refused.json.issues?.[0]?.path).toEqual(['sender']);
    const broadcast = await call('POST', '/send/mail/broadcast', {
      key,
      body: { ...SEND, sender: 'news@acme.test', recipients: [{ address: 'a@b.test' }] },
    });
    expect(broadcast.status).toBe(403);
    const sent = await call('POST', '/send/mail', { key, body: { ...SEND, sender: 'news@example.com' } });
    expect(sent.status).toBe(200);
  });

  it('rotation: the old key works through its grace period, then 401; the new one works', async () => {
    await start();
    const keys = await call('GET', '/keys');
    const id = (keys.json.data.keys as Array<{ id: string }>)[0]?.id ?? '';
    const rotated = await call('POST', `/keys/${id}/rotate`, { body: { graceSeconds: 60 } });
    expect(rotated.status).toBe(200);
    const fresh = rotated.json.data.secret as string;
    expect(rotated.json.data.previous).toMatchObject({
      id,
      state: 'expiring',
      replacedBy: expect.any(String),
    });
    // In its grace period the old key still reads and sends, but manages no keys: it cannot make itself a
    // successor that never expires, nor rotate or revoke the key that replaced it.
    const minted = await call('POST', '/keys', { body: { scope: 'full' } });
    expect(minted.status).toBe(403);
    expect(minted.json.message).toMatch(/grace period/);
    const freshId = (rotated.json.data.key as { id: string }).id;
    expect((await call('POST', `/keys/${freshId}/rotate`, { body: {} })).status).toBe(403);
    expect((await call('DELETE', `/keys/${freshId}`)).status).toBe(403);
    expect((await call('GET', '/keys', { key: fresh })).json.data.keys).toHaveLength(2);
    now += 59_000;
    expect((await call('GET', '/keys')).status).toBe(200);
    now += 1_000;
    expect((await call('GET', '/keys')).status).toBe(401);
    expect((await call('GET', '/keys', { key: fresh })).status).toBe(200);
    // A second rotation of the same key is a conflict.
    expect((await call('POST', `/keys/${id}/rotate`, { key: fresh })).status).toBe(409);
  });

  it('revocation: 401 at once; revoking again keeps the first time; another id is 404', async () => {
    await start();
    const created = await call('POST', '/keys', { body: { scope: 'full' } });
    const { id } = created.json.data.key as { id: string };
    const key = created.json.data.secret as string;
    const revoked = await call('DELETE', `/keys/${id}`);
    expect(revoked.json.data.key).toMatchObject({ state: 'revoked' });
    expect((await call('GET', '/keys', { key })).status).toBe(401);
    expect((await call('DELETE', '/keys/key_nope')).status).toBe(404);
  });

  it('notes the last use at most once a minute per key, never a write per request', async () => {
    await start();
    for (let i = 0; i < 20; i++) expect((await call('GET', '/keys')).status).toBe(200);
    await mailroom.worker.drain();
    expect(touches).toBe(1);
    const listed = await call('GET', '/keys');
    expect((listed.json.data.keys as Array<{ lastUsedAt: string }>)[0]?.lastUsedAt).toBe(
      new Date(now).toISOString(),
    );
    now += 61_000;
    await call('GET', '/keys');
    expect(touches).toBe(2);
  });
});

describe('wrong keys, limited per client address', () => {
  it('after 10 wrong keys an address gets 429 with Retry-After for wrong keys; correct keys from it and from elsewhere are served', async () => {
    await start();
    const wrong = `sk_live_${'x'.repeat(43)}`;
    for (let i = 0; i < 10; i++) {
      // A correct key from the same address before the limit: answered as usual.
      expect((await call('GET', '/keys')).status).toBe(200);
      expect((await call('GET', '/keys', { key: wrong })).status).toBe(401);
    }
    const limited = await call('GET', '/keys', { key: wrong });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    // From the limited address a correct key is still served; a wrong one waits; from another address,
    // a correct key is answered.
    expect((await call('GET', '/keys')).status).toBe(200);
    expect((await call('GET', '/keys', { key: `sk_live_${'z'.repeat(43)}` })).status).toBe(429);
    const elsewhere = await call('GET', '/keys', { from: '127.0.0.2' });
    expect(elsewhere.status, elsewhere.text).toBe(200);
    // Another address guessing under a prefix over its failures is limited too; under another prefix, not yet.
    expect((await call('GET', '/keys', { key: wrong, from: '127.0.0.2' })).status).toBe(429);
    const other = `sk_live_${'q'.repeat(43)}`;
    expect((await call('GET', '/keys', { key: other, from: '127.0.0.2' })).status).toBe(401);
    // No key at all is not a guess: 401, not counted.
    expect((await call('GET', '/keys', { key: null, from: '127.0.0.3' })).status).toBe(401);
  });

  it('the limit can be set, and turned off', async () => {
    await start({ authFailureLimit: { failures: 2, windowSeconds: 5 } });
    const wrong = `sk_live_${'y'.repeat(43)}`;
    expect((await call('GET', '/keys', { key: wrong })).status).toBe(401);
    expect((await call('GET', '/keys', { key: wrong })).status).toBe(401);
    const limited = await call('GET', '/keys', { key: wrong });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(5);
    await close?.();
    await mailroom.close();
    await start({ authFailureLimit: false });
    for (let i = 0; i < 15; i++) expect((await call('GET', '/keys', { key: wrong })).status).toBe(401);
  });

  it('bounds what a limited caller costs: a known wrong key no lookup, others at most maxConcurrentChecks at once', async () => {
    const limit = createAuthFailureLimit({ failures: 2, windowSeconds: 60, maxConcurrentChecks: 3 });
    const valid = `sk_live_${'v'.repeat(43)}`;
    let calls = 0;
    let inFlight = 0;
    let most = 0;
    const verify = (secret: string) => async () => {
      calls += 1;
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight -= 1;
      if (secret !== valid) throw new MailroomError('UNAUTHORIZED', 'Missing or invalid project secret');
      return 'served';
    };
    const attempt = (key: string, address = '10.0.0.1') =>
      limit.guard(address, key, verify(key)).then(
        (result) => result,
        (error: MailroomError) => error.code,
      );
    const wrong = (i: number) => `sk_live_${String(i).padStart(43, 'w')}`;
    expect(await attempt(wrong(1))).toBe('UNAUTHORIZED');
    expect(await attempt(wrong(2))).toBe('UNAUTHORIZED');
    // Limited now. The same wrong key again: refused without a lookup.
    calls = 0;
    for (let i = 0; i < 50; i++) expect(await attempt(wrong(1))).toBe('RATE_LIMITED');
    expect(calls).toBe(0);
    // 100 new wrong keys at once: every one refused, never more than 3 lookups at a time.
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => attempt(wrong(100 + i))));
    expect(new Set(answers)).toEqual(new Set(['RATE_LIMITED']));
    expect(most).toBeLessThanOrEqual(3);
    expect(calls).toBeLessThanOrEqual(100);
    // A valid key from the limited address is served (a bounded check), and then known valid.
    expect(await attempt(valid)).toBe('served');
    expect(await attempt(valid)).toBe('served');
  });

  it('keeps at most maxAddresses addresses (and as many prefixes), whatever the number of addresses guessing', async () => {
    let t = 0;
    const limit = createAuthFailureLimit({ failures: 3, windowSeconds: 60, maxAddresses: 100 }, () => t);
    const wrongKey = async () => {
      throw new MailroomError('UNAUTHORIZED', 'Missing or invalid project secret');
    };
    const attempt = (address: string, key: string | null) =>
      limit.guard(address, key, wrongKey).then(
        () => 'served',
        (error: MailroomError) => error.code,
      );
    for (let i = 0; i < 10_000; i++) {
      await attempt(`10.0.${i >> 8}.${i & 255}`, `sk_live_${String(i).padStart(20, 'a')}`);
      t += 1;
      expect(limit.size).toBeLessThanOrEqual(200);
    }
    // A recent address is still counted after the churn.
    const address = '10.9.9.9';
    for (let i = 0; i < 3; i++) expect(await attempt(address, null)).toBe('UNAUTHORIZED');
    expect(await attempt(address, null)).toBe('RATE_LIMITED');
    // And forgotten once its window has passed.
    t += 60_001;
    expect(await attempt(address, null)).toBe('UNAUTHORIZED');
  });
});
