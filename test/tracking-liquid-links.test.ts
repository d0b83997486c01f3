import type { AddressInfo } from 'node:net';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { type MemoryTransport, memoryStore, memoryTransport } from '@mailroom/memory';
import fc from 'fast-check';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A tracked link whose href holds any number of Liquid outputs, with any characters around and in them,
 * clicks through the real route (Fastify on 127.0.0.1) to the URL the same mailing has without tracking.
 * Values are carried in the token joined by `~`, which the route must take (as sent, or as `%7E`).
 */

const SENDER = 'news@acme.test';

/** The entities Liquid's HTML escaping writes into an attribute, decoded as a browser would. */
const decodeAttribute = (value: string): string =>
  value.replace(
    /&(amp|lt|gt|quot|#39|#34);/g,
    (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#34': '"' })[name] ?? '',
  );

describe('tracked links with Liquid outputs, through the real click route', () => {
  let mailroom: Mailroom;
  let transport: MemoryTransport;
  let app: FastifyInstance;
  let port = 0;
  let secret: string;

  beforeAll(async () => {
    transport = memoryTransport();
    mailroom = createMailroom({
      store: memoryStore(),
      transport,
      tracking: { baseUrl: () => `http://127.0.0.1:${port}`, clicks: true, scannerWindowMs: 0, flushMs: 20 },
    });
    app = Fastify();
    await app.register(mailroomPlugin, { mailroom });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    await mailroom.admin.addSender(created.project.id, { address: SENDER });
  });

  afterAll(async () => {
    await app.close();
    await mailroom.close();
  });

  async function hrefIn(html: string, variables: Record<string, string>, clicks: boolean): Promise<string> {
    transport.clear();
    await mailroom.broadcast(secret, {
      subject: 'Links',
      sender: SENDER,
      message: `<html><body><p>Hi</p>${html}</body></html>`,
      recipients: [{ address: 'ann@example.test', variables }],
      options: { track: { clicks } },
    });
    await mailroom.worker.drain();
    const sent = String(transport.outbox[0]?.html ?? '');
    const m = /<a href="([^"]*)"/.exec(sent);
    if (!m?.[1]) throw new Error(`no link in ${sent}`);
    return decodeAttribute(m[1]);
  }

  // Characters a link's fixed parts and its values may hold: URL syntax, escapes, quotes, Liquid-looking
  // text, non-ASCII (whole code points), and `~` itself.
  const piece = fc.string({
    unit: fc.constantFrom(...Array.from('aZ09-_.~!$&()*+,;=:@/?#[]%20 é€😀\'"<>{}|\\^`'), 'ä', '%7E', '%41'),
    maxLength: 8,
  });

  it('goes to the untracked URL for 1 to 4 outputs', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(piece, piece), { minLength: 1, maxLength: 4 }),
        piece,
        async (parts, tail) => {
          const variables: Record<string, string> = {};
          let href = 'https://shop.example.test/p?';
          parts.forEach(([fixed, value], i) => {
            variables[`v${i}`] = value;
            href += `${fixed.replace(/[{}"<>]/g, '')}{{ v${i} }}`;
          });
          href += tail.replace(/[{}"<>]/g, '');
          const link = `<a href="${href.replace(/&/g, '&amp;')}">Go</a>`;
          const expected = await hrefIn(link, variables, false);
          const tracked = await hrefIn(link, variables, true);
          expect(tracked).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/t/c/`));
          for (const url of [tracked, tracked.replace(/~/g, '%7E')]) {
            const res = await fetch(url, { redirect: 'manual' });
            expect(res.status, url).toBe(302);
            expect(res.headers.get('location')).toBe(new URL(expected).href);
          }
        },
      ),
      { numRuns: 60 },
    );
  }, 120_000);
});
