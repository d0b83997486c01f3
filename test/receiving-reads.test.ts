import { createMailroom, type Mailroom } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The listener's reads per received message (issue 40, the inbound bench): the RCPT check, the routing
 * and the size cap read the routes and the settings once per couple of seconds, not three store reads a
 * message; a route or a setting changed through the engine applies to the very next message.
 */

const INBOX = 'in.acme.test';
const raw = (body: string) =>
  new TextEncoder().encode(
    `From: Ana <ana@sender.test>\r\nTo: support@${INBOX}\r\nSubject: Hi\r\n\r\n${body}\r\n`,
  );
const envelope = {
  envelopeFrom: 'ana@sender.test',
  envelopeTo: [`support@${INBOX}`],
  remoteAddress: '127.0.0.1',
  helo: 'mx.sender.test',
};

describe('receiving: routes and settings read once for many messages', () => {
  const asked: string[] = [];
  let mailroom: Mailroom;
  let secret: string;

  beforeAll(async () => {
    const store = memoryStore();
    // The store as the engine sees it, counting the two reads.
    const counted = new Proxy(store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (name !== 'findReceivingRoutes' && name !== 'getReceivingSettings') return value;
        return (...args: unknown[]) => {
          asked.push(String(name));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    mailroom = createMailroom({
      store: counted,
      transport: memoryTransport(),
      receiving: {
        parseThreads: 0,
        // No records: SPF and DMARC answer none, and nothing leaves the process.
        resolver: {
          resolve: async () => {
            throw Object.assign(new Error('none'), { code: 'ENOTFOUND' });
          },
        },
      },
    });
    secret = (await mailroom.admin.createProject({ name: 'Acme' })).secret;
    await mailroom.receiving.addRoute(secret, {
      domain: INBOX,
      pattern: 'support',
      destination: { kind: 'store' },
    });
  });

  afterAll(async () => {
    await mailroom?.close();
  });

  it('asks the store once for ten messages (RCPT check, routing, size cap)', async () => {
    asked.length = 0;
    for (let i = 0; i < 10; i++) {
      expect(await mailroom.receiving.routes(`support@${INBOX}`)).toBe(true);
      expect((await mailroom.receiving.receive(raw(`message ${i}`), envelope)).messageIds).toHaveLength(1);
    }
    expect(asked.filter((n) => n === 'findReceivingRoutes')).toHaveLength(1);
    expect(asked.filter((n) => n === 'getReceivingSettings')).toHaveLength(1);
  });

  it('applies a changed setting and a removed route to the next message', async () => {
    expect(await mailroom.receiving.routes(`support@${INBOX}`)).toBe(true);
    await mailroom.receiving.updateSettings(secret, { max_message_bytes: 1024 });
    await expect(mailroom.receiving.receive(raw('x'.repeat(2000)), envelope)).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
    });
    const [route] = await mailroom.receiving.listRoutes(secret);
    await mailroom.receiving.removeRoute(secret, route?.id ?? '');
    expect(await mailroom.receiving.routes(`support@${INBOX}`)).toBe(false);
    expect((await mailroom.receiving.receive(raw('late'), envelope)).messageIds).toEqual([]);
    await mailroom.receiving.addRoute(secret, {
      domain: INBOX,
      pattern: '*',
      destination: { kind: 'store' },
    });
    expect(await mailroom.receiving.routes(`anyone@${INBOX}`)).toBe(true);
  });
});
