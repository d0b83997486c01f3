import type { AuthContext, BroadcastResult, Logger, Mailroom, SendResult } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import { createHandler, type NeutralRequest } from '@mailroom/http';
import { describe, expect, it } from 'vitest';

/**
 * Handler-level tests with a hand-written engine: they pin the HTTP layer's own decisions (routing, size,
 * media type, auth header parsing, rate limit, envelopes) without a store. The HTTP suite in
 * http-binders.test.ts runs the real engine through both binders.
 */

const SECRET = 'sk_live_stubsecret';
const UNAUTHORIZED = 'Invalid project secret';

interface Calls {
  authenticate: Array<string | null | undefined>;
  send: unknown[];
  broadcast: unknown[];
}

function stubEngine(behaviour: { send?: (body: unknown) => Promise<SendResult> } = {}): {
  mailroom: Mailroom;
  calls: Calls;
} {
  const calls: Calls = { authenticate: [], send: [], broadcast: [] };
  const auth: AuthContext = { project: { id: 'prj_1', name: 'p', createdAt: new Date(0) }, mode: 'live' };
  const resolve = async (a: string | AuthContext): Promise<AuthContext> =>
    typeof a === 'string' ? engine.authenticate(a) : a;
  const unused = (): never => {
    throw new Error('not used by the HTTP layer');
  };
  const engine: Mailroom = {
    store: new Proxy({}, { get: unused }) as Mailroom['store'],
    transport: new Proxy({}, { get: unused }) as Mailroom['transport'],
    admin: new Proxy({}, { get: unused }) as Mailroom['admin'],
    worker: new Proxy({}, { get: unused }) as Mailroom['worker'],
    inbound: new Proxy({}, { get: unused }) as Mailroom['inbound'],
    listInboundSignals: unused,
    bouncesByDomain: unused,
    webhooks: new Proxy({}, { get: unused }) as Mailroom['webhooks'],
    topics: new Proxy({}, { get: unused }) as Mailroom['topics'],
    forms: new Proxy({}, { get: unused }) as Mailroom['forms'],
    signups: new Proxy({}, { get: unused }) as Mailroom['signups'],
    brand: new Proxy({}, { get: unused }) as Mailroom['brand'],
    automations: new Proxy({}, { get: unused }) as Mailroom['automations'],
    track: unused,
    receiving: new Proxy({}, { get: unused }) as Mailroom['receiving'],
    keys: new Proxy({}, { get: unused }) as Mailroom['keys'],
    templates: new Proxy({}, { get: unused }) as Mailroom['templates'],
    senders: new Proxy({}, { get: unused }) as Mailroom['senders'],
    suppressions: new Proxy({}, { get: unused }) as Mailroom['suppressions'],
    audience: new Proxy({}, { get: unused }) as Mailroom['audience'],
    getMessage: unused,
    listEvents: unused,
    async authenticate(secret) {
      calls.authenticate.push(secret);
      if (secret !== SECRET) throw new MailroomError('UNAUTHORIZED', UNAUTHORIZED);
      return auth;
    },
    async send(a, body) {
      await resolve(a);
      calls.send.push(body);
      if (behaviour.send) return behaviour.send(body);
      return { ref: 'msg_1', status: 'queued' };
    },
    async broadcast(a, body): Promise<BroadcastResult> {
      await resolve(a);
      calls.broadcast.push(body);
      const seq = typeof body === 'object' && body !== null && 'broadcastRef' in body ? 2 : 1;
      return { ref: 'bc_1', status: 'queued', batch: { seq, recipients: 1, inserted: 1 } };
    },
    sendBatch: unused,
    getMailing: unused,
    listDeliveries: unused,
    getDelivery: unused,
    listMailings: unused,
    searchDeliveries: unused,
    listSourceJobs: unused,
    listTemplates: unused,
    getTemplate: unused,
    previewTemplate: unused,
    listGroups: unused,
    activity: unused,
    queueDepth: unused,
    cancel: unused,
    reschedule: unused,
    pauseBroadcast: unused,
    resumeBroadcast: unused,
    pauseSending: unused,
    resumeSending: unused,
    pauseDestination: unused,
    resumeDestination: unused,
    listPauses: unused,
    pruneContent: unused,
    resolveUnsubscribe: unused,
    unsubscribe: unused,
    preferencesUrl: unused,
    openPreferences: unused,
    savePreferences: unused,
    trackClick: unused,
    trackOpen: unused,
    getTracking: unused,
    getDeliveryTracking: unused,
    addDomain: unused,
    listDomains: unused,
    getDomain: unused,
    verifyDomain: unused,
    rotateDkim: unused,
    removeDomain: unused,
    listDomainWarnings: unused,
    checkDueDomains: unused,
    on: unused,
    health: unused,
    close: async () => {},
  };
  return { mailroom: engine, calls };
}

const json = (body: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(body));

function post(
  path: string,
  body: Uint8Array | undefined,
  headers: Record<string, string> = {},
): NeutralRequest {
  return {
    method: 'POST',
    path,
    headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json', ...headers },
    body,
  };
}

const parse = (body: string): Record<string, unknown> => JSON.parse(body) as Record<string, unknown>;

describe('createHandler', () => {
  it('answers send and both broadcast spellings with the 200 envelope', async () => {
    const { mailroom, calls } = stubEngine();
    const handle = createHandler(mailroom);
    const sent = await handle(post('/send/mail', json({ subject: 'x' })));
    expect(sent.status).toBe(200);
    expect(parse(sent.body)).toEqual({
      message: 'Message accepted',
      statusCode: 200,
      data: { ref: 'msg_1', status: 'queued' },
    });
    expect(calls.send).toEqual([{ subject: 'x' }]);

    for (const path of ['/send/mail/broadcast', '/send/mail/broadast']) {
      const res = await handle(post(path, json({ subject: 'y' })));
      expect(res.status).toBe(200);
      expect(parse(res.body)).toMatchObject({
        statusCode: 200,
        data: { broadcast: { ref: 'bc_1', status: 'queued' }, broadcastRef: 'bc_1', batch: { seq: 1 } },
      });
    }
    const batch = await handle(
      post('/send/mail/broadcast', json({ broadcastRef: 'bc_1', recipients: ['a@b.c'] })),
    );
    expect(parse(batch.body)).toMatchObject({
      message: 'Broadcast batch accepted',
      data: { batch: { seq: 2 } },
    });
    expect(calls.broadcast).toHaveLength(3);
  });

  it('answers 404 for unknown paths and 405 with Allow for wrong methods', async () => {
    const handle = createHandler(stubEngine().mailroom);
    const missing = await handle(post('/send/nothing', json({})));
    expect(missing.status).toBe(404);
    expect(parse(missing.body)).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });

    const wrong = await handle({ method: 'GET', path: '/send/mail', headers: {}, body: undefined });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('POST');
    expect(parse(wrong.body)).toMatchObject({ statusCode: 405, code: 'METHOD_NOT_ALLOWED' });

    const putDoc = await handle({ method: 'PUT', path: '/openapi.json', headers: {}, body: undefined });
    expect(putDoc.status).toBe(405);
    expect(putDoc.headers.allow).toBe('GET, HEAD');

    const noDoc = createHandler(stubEngine().mailroom, { openapi: false });
    expect((await noDoc({ method: 'GET', path: '/openapi.json', headers: {}, body: undefined })).status).toBe(
      404,
    );
  });

  it('echoes a sane X-Request-ID and replaces anything else', async () => {
    let n = 0;
    const handle = createHandler(stubEngine().mailroom, { requestId: () => `gen-${++n}` });
    const echoed = await handle(post('/send/mail', json({}), { 'x-request-id': 'abc.DEF_12-3' }));
    expect(echoed.headers['x-request-id']).toBe('abc.DEF_12-3');
    const spaced = await handle(post('/send/mail', json({}), { 'x-request-id': 'has space' }));
    expect(spaced.headers['x-request-id']).toBe('gen-1');
    const long = await handle(post('/send/mail', json({}), { 'x-request-id': 'a'.repeat(129) }));
    expect(long.headers['x-request-id']).toBe('gen-2');
    const exact = await handle(post('/send/mail', json({}), { 'x-request-id': 'a'.repeat(128) }));
    expect(exact.headers['x-request-id']).toBe('a'.repeat(128));
    const notFound = await handle({ method: 'GET', path: '/x', headers: {}, body: undefined });
    expect(notFound.headers['x-request-id']).toBe('gen-3');
  });

  it('refuses a body over the limit with 413 before authenticating or parsing', async () => {
    const { mailroom, calls } = stubEngine();
    const handle = createHandler(mailroom, { bodyLimit: 16 });
    const declared = await handle(post('/send/mail', undefined, { 'content-length': '17' }));
    expect(declared.status).toBe(413);
    expect(parse(declared.body)).toMatchObject({ statusCode: 413, code: 'PAYLOAD_TOO_LARGE' });
    const streamed = await handle(post('/send/mail', new Uint8Array(17).fill(0x7b)));
    expect(streamed.status).toBe(413);
    const atLimit = await handle(post('/send/mail', json({ a: '12345678' })));
    expect(atLimit.status).toBe(200);
    expect(calls.authenticate).toHaveLength(1);
  });

  it('accepts only application/json, with an optional UTF-8 charset', async () => {
    const handle = createHandler(stubEngine().mailroom);
    const body = json({});
    for (const type of [
      'application/json',
      'Application/JSON; charset=UTF-8',
      'application/json;charset="utf-8"',
    ]) {
      expect((await handle(post('/send/mail', body, { 'content-type': type }))).status).toBe(200);
    }
    for (const type of ['text/plain', 'application/json; charset=latin1', 'application/jsonx', '']) {
      const res = await handle(post('/send/mail', body, { 'content-type': type }));
      expect(res.status).toBe(415);
      expect(parse(res.body)).toMatchObject({ statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
    }
    const none = post('/send/mail', body);
    delete none.headers['content-type'];
    expect((await handle(none)).status).toBe(415);
  });

  it('answers one identical 401 for a missing, malformed or unknown secret', async () => {
    const { mailroom, calls } = stubEngine();
    const handle = createHandler(mailroom);
    const bodies: string[] = [];
    for (const authorization of [
      undefined,
      'Basic abc',
      'Bearer',
      `Bearer ${SECRET} extra`,
      'Bearer sk_live_nope',
    ]) {
      const req = post('/send/mail', json({}));
      req.headers.authorization = authorization;
      const res = await handle(req);
      expect(res.status).toBe(401);
      bodies.push(res.body);
    }
    expect(new Set(bodies).size).toBe(1);
    expect(parse(bodies[0] ?? '')).toEqual({
      message: UNAUTHORIZED,
      statusCode: 401,
      code: 'UNAUTHORIZED',
      error: UNAUTHORIZED,
      detail: UNAUTHORIZED,
    });
    expect(calls.authenticate).toEqual([null, null, null, null, 'sk_live_nope']);
    expect(calls.send).toHaveLength(0);
    // The scheme is case-insensitive.
    expect((await handle(post('/send/mail', json({}), { authorization: `bEaReR ${SECRET}` }))).status).toBe(
      200,
    );
  });

  it('answers 400 for a body that is not UTF-8 JSON', async () => {
    const handle = createHandler(stubEngine().mailroom);
    for (const body of [
      new TextEncoder().encode('{"subject":'),
      undefined,
      new Uint8Array([0x22, 0xff, 0x22]),
    ]) {
      const res = await handle(post('/send/mail', body));
      expect(res.status).toBe(400);
      expect(parse(res.body)).toMatchObject({ statusCode: 400, code: 'MALFORMED_JSON' });
    }
  });

  it('rate-limits per project with 429 and Retry-After', async () => {
    const handle = createHandler(stubEngine().mailroom, { rateLimit: { perProjectPerSecond: 1, burst: 2 } });
    expect((await handle(post('/send/mail', json({})))).status).toBe(200);
    expect((await handle(post('/send/mail', json({})))).status).toBe(200);
    const limited = await handle(post('/send/mail', json({})));
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    expect(parse(limited.body)).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED' });
  });

  it('answers 500 without internals and logs the fault with the request id, never the secret or body', async () => {
    const { mailroom } = stubEngine({
      send: async () => {
        throw new Error('db exploded at 10.0.0.7');
      },
    });
    const logged: Array<{ obj: object; msg?: string | undefined }> = [];
    const logger: Logger = {
      debug: () => {},
      info: () => {},
      warn: () => {},
      error: (obj, msg) => logged.push({ obj, msg }),
    };
    const handle = createHandler(mailroom, { logger });
    const res = await handle(
      post('/send/mail', json({ subject: 'secret-body-marker' }), { 'x-request-id': 'req-500' }),
    );
    expect(res.status).toBe(500);
    expect(parse(res.body)).toEqual({
      message: 'Internal server error',
      statusCode: 500,
      code: 'INTERNAL',
      error: 'Internal server error',
      detail: 'Internal server error',
    });
    expect(res.headers['x-request-id']).toBe('req-500');
    expect(logged).toHaveLength(1);
    const line = JSON.stringify(logged[0]);
    expect(line).toContain('req-500');
    expect(line).toContain('db exploded');
    expect(line).not.toContain(SECRET);
    expect(line).not.toContain('secret-body-marker');
  });

  it('passes validation issues through and keeps a MailroomError status from the table', async () => {
    const issues = [{ code: 'too_big', path: ['recipients'], message: 'At most 10 recipients per request' }];
    const { mailroom } = stubEngine({
      send: async () => {
        throw new MailroomError('VALIDATION_FAILED', 'Invalid request body', { issues });
      },
    });
    const res = await createHandler(mailroom)(post('/send/mail', json({})));
    expect(res.status).toBe(400);
    expect(parse(res.body)).toMatchObject({ code: 'VALIDATION_FAILED', issues });
  });
});
