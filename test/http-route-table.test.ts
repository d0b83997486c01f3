import type { AddressInfo } from 'node:net';
import type { Mailroom } from '@mailroom/core';
import { createMailroom } from '@mailroom/core';
import { mailroomRouter } from '@mailroom/http/express';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { MatchedRoute } from '../packages/http/src/routes/routes.js';

/**
 * The handler dispatches through a table keyed by route name. A route the path table knows but the
 * handler table does not (a route added without its handler, or a name that is an inherited property of
 * an object) must answer 404, never be served as another route: the former if-chain served it as a
 * broadcast. The path table is wrapped so that two such paths match; everything else is the real one.
 */
vi.mock(import('../packages/http/src/routes/routes.js'), async (importOriginal) => {
  const real = await importOriginal();
  const unhandled: Record<string, MatchedRoute> = {
    '/send/mail/retired': {
      name: 'retired' as MatchedRoute['name'],
      allow: ['POST'],
      access: { POST: 'full' },
    },
    '/send/mail/inherited': {
      name: 'constructor' as MatchedRoute['name'],
      allow: ['POST'],
      access: { POST: 'full' },
    },
  };
  return {
    ...real,
    matchRoute: (path: string, openapi: boolean) => unhandled[path] ?? real.matchRoute(path, openapi),
  };
});

const SENDER = 'noreply@acme.test';

interface Started {
  url: string;
  close: () => Promise<void>;
}

const startExpress = async (mailroom: Mailroom): Promise<Started> => {
  const app = express();
  app.use(mailroomRouter(mailroom));
  const server = await new Promise<ReturnType<typeof app.listen>>((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', (error?: Error) => (error ? reject(error) : resolve(s)));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

const startFastify = async (mailroom: Mailroom): Promise<Started> => {
  const app = Fastify();
  await app.register(mailroomPlugin, { mailroom });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
};

describe.each([
  ['express', startExpress],
  ['fastify', startFastify],
] as const)('route table through %s', (_binder, start) => {
  let mailroom: Mailroom;
  let secret: string;
  let server: Started;

  beforeAll(async () => {
    mailroom = createMailroom({ store: memoryStore(), transport: memoryTransport() });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    await mailroom.admin.addSender(created.project.id, { address: SENDER });
    server = await start(mailroom);
  });

  afterAll(async () => {
    await server?.close();
    await mailroom?.close();
  });

  /** A broadcast request the engine accepts, posted to `path`. */
  const postBroadcast = async (path: string) => {
    const res = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        subject: 'News',
        sender: { address: SENDER },
        recipients: [{ address: 'ann@example.com' }],
        message: '<p>News</p>',
      }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('answers 404 for a matched route without a handler, and serves no broadcast', async () => {
    for (const path of ['/send/mail/retired', '/send/mail/inherited']) {
      const res = await postBroadcast(path);
      expect(res.status, path).toBe(404);
      expect(res.body, path).toMatchObject({
        statusCode: 404,
        code: 'NOT_FOUND',
        message: 'Route not found',
      });
    }
    expect((await mailroom.listMailings(secret, 'broadcast')).items).toEqual([]);

    // The same request on the real broadcast route is accepted: the 404s above are the table's.
    const accepted = await postBroadcast('/send/mail/broadcast');
    expect(accepted.status).toBe(200);
    expect((await mailroom.listMailings(secret, 'broadcast')).items).toHaveLength(1);
  });
});
