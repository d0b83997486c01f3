import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailroomClient, MailroomApiError } from '../src/index.js';

/**
 * What the client makes of answers that a Mailroom server does not give but a path to it may: a proxy's
 * HTML error page, a 429 with `Retry-After`, a 200 that is not the API. A real HTTP server on loopback
 * plays them (the real server's own answers are in test/client-remote.test.ts).
 */
describe('the client with answers from between it and the server', () => {
  let server: Server;
  let url: string;
  const seen: Array<{ method: string; path: string; authorization: string; headers: string[] }> = [];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        seen.push({
          method: req.method ?? '',
          path: req.url ?? '',
          authorization: req.headers.authorization ?? '',
          headers: [String(req.headers['user-agent']), String(req.headers['x-request-id'])],
        });
        if (req.url?.startsWith('/api/webhooks')) {
          res.writeHead(502, { 'content-type': 'text/html' });
          res.end('<html><body><h1>502 Bad Gateway</h1>\n<p>nginx</p></body></html>');
        } else if (req.url?.startsWith('/api/events')) {
          const message = 'Too many requests: 20 per second';
          res.writeHead(429, {
            'content-type': 'application/json',
            'retry-after': '3',
            'x-request-id': 'r-1',
          });
          res.end(
            JSON.stringify({
              message,
              statusCode: 429,
              code: 'RATE_LIMITED',
              error: message,
              detail: message,
            }),
          );
        } else {
          res.writeHead(200, { 'content-type': 'text/html' });
          res.end('<html>a login page</html>');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends the key, the path under the mount point, the query and the per-call headers', async () => {
    const client = createMailroomClient({ url, key: 'sk_live_abc', headers: { 'user-agent': 'acme/1' } });
    await client.listEvents({ types: 'email.sent', limit: 5 }).catch(() => {});
    await client.domains.verify('Acme Corp.test', { requestId: 'req-7' }).catch(() => {});
    expect(seen.slice(-2)).toEqual([
      {
        method: 'GET',
        path: '/api/events?types=email.sent&limit=5',
        authorization: 'Bearer sk_live_abc',
        headers: ['acme/1', 'undefined'],
      },
      {
        method: 'POST',
        path: '/api/domains/Acme%20Corp.test/verify',
        authorization: 'Bearer sk_live_abc',
        headers: ['acme/1', 'req-7'],
      },
    ]);
  });

  it('rejects a proxy page with the code of its status and the start of its text', async () => {
    const client = createMailroomClient({ url, key: 'k' });
    const error = (await client.webhooks.list().catch((e: unknown) => e)) as MailroomApiError;
    expect(error).toBeInstanceOf(MailroomApiError);
    expect(error).toMatchObject({ status: 502, code: 'INTERNAL', requestId: undefined });
    expect(error.message).toBe('HTTP 502: <html><body><h1>502 Bad Gateway</h1> <p>nginx</p></body></html>');
    expect(error.body).toMatchObject({ statusCode: 502, code: 'INTERNAL', message: error.message });
  });

  it('keeps the envelope, Retry-After and X-Request-ID of a refusal', async () => {
    const client = createMailroomClient({ url, key: 'k' });
    const error = (await client.listEvents().catch((e: unknown) => e)) as MailroomApiError;
    expect(error).toMatchObject({
      status: 429,
      code: 'RATE_LIMITED',
      retryAfter: 3,
      requestId: 'r-1',
      message: 'Too many requests: 20 per second',
    });
  });

  it('rejects a 200 that is not the API (a wrong mount point)', async () => {
    const client = createMailroomClient({ url, key: 'k' });
    await expect(client.domains.list()).rejects.toMatchObject({
      name: 'MailroomApiError',
      status: 200,
      message: expect.stringContaining('text/html, not JSON'),
    });
  });
});
