import type { AddressInfo } from 'node:net';
import {
  composeFor,
  createMailroom,
  MailroomError,
  type OutgoingMessage,
  routeTransport,
  sentVia,
  type Transport,
} from '@mailroom/core';
import { transportTestSuite } from '@mailroom/core/testing';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { smtpTransport } from '@mailroom/smtp';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { dashboardCookie } from './support/dashboard-session.js';
import { startSmtpSink } from './support/smtp-sink.js';

transportTestSuite('route', async () => {
  const primary = await startSmtpSink();
  const spare = await startSmtpSink();
  const transport = routeTransport({
    routes: [{ when: { senderDomain: 'EXAMPLE.com' }, transport: smtpTransport(primary.url) }],
    fallback: smtpTransport(spare.url),
  });
  return {
    transport,
    // The kit's messages come from example.com: all of them take the route, none the fallback.
    received: async () => (spare.messages.length > 0 ? [] : primary.received()),
    close: async () => {
      await transport.close?.();
      await Promise.all([primary.close(), spare.close()]);
    },
  };
});

function message(overrides: Partial<OutgoingMessage> = {}): OutgoingMessage {
  return {
    messageId: `<${Math.random().toString(36).slice(2)}@route.test>`,
    from: { address: 'news@acme.test', name: '' },
    to: { address: 'ann@example.org', name: '' },
    subject: 'Hi',
    text: 'Hello',
    attachments: [],
    headers: {},
    mailing: { projectId: 'prj_1', kind: 'broadcast', ref: 'brd_1' },
    ...overrides,
  };
}

const transient = (reply = '421 4.3.2 Service not available') =>
  new MailroomError('TRANSPORT_TRANSIENT', reply, {
    responseCode: Number(reply.slice(0, 3)),
    response: reply,
  });

/** A memory transport under another name, whose failures a test switches on and off. */
function switchable(name: string) {
  let failure: MailroomError | undefined;
  const inner = memoryTransport({ failWith: () => failure });
  const transport: Transport = { ...inner, name };
  return {
    transport,
    outbox: inner.outbox,
    fail(error: MailroomError | undefined) {
      failure = error;
    },
  };
}

/** A route to `primary` with the fallback `spare`, a 1 s failover window and a clock the test sets. */
function failoverRig() {
  let clock = 0;
  const primary = switchable('primary');
  const spare = switchable('spare');
  const route = routeTransport({
    routes: [{ when: {}, transport: primary.transport }],
    fallback: spare.transport,
    failoverMs: 1000,
    now: () => clock,
  });
  return {
    primary,
    spare,
    route,
    at(ms: number) {
      clock = ms;
    },
  };
}

describe('routeTransport', () => {
  it('sends by sender domain, project and kind, first matching route first, else to the fallback', async () => {
    const a = switchable('a');
    const b = switchable('b');
    const c = switchable('c');
    const spare = switchable('spare');
    const route = routeTransport({
      routes: [
        { when: { senderDomain: 'billing.acme.test', kind: 'message' }, transport: a.transport },
        { when: { project: ['prj_2', 'prj_3'] }, transport: b.transport },
        { when: { kind: 'broadcast' }, transport: c.transport },
      ],
      fallback: spare.transport,
    });
    const sent = async (m: OutgoingMessage) => (await route.send(composeFor(route, m))).transport;
    expect(
      await sent(
        message({
          from: { address: 'bill@Billing.Acme.test', name: '' },
          mailing: { projectId: 'prj_1', kind: 'message', ref: 'msg_1' },
        }),
      ),
    ).toBe('a');
    expect(await sent(message({ mailing: { projectId: 'prj_3', kind: 'message', ref: 'msg_2' } }))).toBe('b');
    expect(await sent(message())).toBe('c');
    expect(await sent(message({ mailing: { projectId: 'prj_1', kind: 'message', ref: 'msg_3' } }))).toBe(
      'spare',
    );
    // Without a mailing context, only sender-domain routes can match.
    const { mailing: _, ...bare } = message();
    expect(await sent(bare)).toBe('spare');
    expect([a.outbox.length, b.outbox.length, c.outbox.length, spare.outbox.length]).toEqual([1, 1, 1, 2]);
  });

  it('without a fallback, a message no route takes fails permanently', async () => {
    const a = switchable('a');
    const route = routeTransport({ routes: [{ when: { kind: 'message' }, transport: a.transport }] });
    await expect(route.send(composeFor(route, message()))).rejects.toMatchObject({
      code: 'TRANSPORT_PERMANENT',
    });
  });

  it('fails over on a transient failure, for the next attempt of the message and others, then probes back', async () => {
    const { primary, spare, route, at } = failoverRig();
    primary.fail(transient());
    const first = message();
    const error = await route.send(composeFor(route, first)).catch((e: unknown) => e);
    // The worker retries it, and neither slows down nor pauses: the next attempt goes elsewhere.
    expect(error).toMatchObject({ code: 'TRANSPORT_TRANSIENT', backpressure: 'none', responseCode: 421 });
    expect((await route.send(composeFor(route, first))).transport).toBe('spare');
    expect((await route.send(composeFor(route, message()))).transport).toBe('spare');
    // The window passes and the primary is back: one probe, and it takes its mail again.
    primary.fail(undefined);
    at(1001);
    expect((await route.send(composeFor(route, message()))).transport).toBe('primary');
    expect((await route.send(composeFor(route, message()))).transport).toBe('primary');
    expect(primary.outbox.map((m) => m.messageId)).not.toContain(first.messageId);
    expect(spare.outbox.filter((m) => m.messageId === first.messageId)).toHaveLength(1);
  });

  it('a failed probe keeps the route on the fallback for another window', async () => {
    const { primary, spare, route, at } = failoverRig();
    primary.fail(transient('451 4.4.1 Connection refused'));
    await expect(route.send(composeFor(route, message()))).rejects.toMatchObject({
      code: 'TRANSPORT_TRANSIENT',
    });
    at(1500);
    await expect(route.send(composeFor(route, message()))).rejects.toMatchObject({
      code: 'TRANSPORT_TRANSIENT',
    });
    at(2000);
    expect((await route.send(composeFor(route, message()))).transport).toBe('spare');
    expect(spare.outbox).toHaveLength(1);
  });

  it("when the fallback fails too, the message's next attempt follows the route's health again", async () => {
    const { primary, spare, route, at } = failoverRig();
    primary.fail(transient());
    const m = message();
    await expect(route.send(composeFor(route, m))).rejects.toMatchObject({ code: 'TRANSPORT_TRANSIENT' });
    spare.fail(transient('451 4.3.0 spare busy'));
    await expect(route.send(composeFor(route, m))).rejects.toMatchObject({
      response: '451 4.3.0 spare busy',
    });
    // The primary is back after its window: the message goes there, not to the failing fallback.
    primary.fail(undefined);
    at(1001);
    expect((await route.send(composeFor(route, m))).transport).toBe('primary');
  });

  it('a permanent refusal never fails over', async () => {
    const primary = switchable('primary');
    const spare = switchable('spare');
    const route = routeTransport({
      routes: [{ when: {}, transport: primary.transport }],
      fallback: spare.transport,
    });
    primary.fail(new MailroomError('TRANSPORT_PERMANENT', '550 5.1.1 no such user', { responseCode: 550 }));
    const refused = message();
    await expect(route.send(composeFor(route, refused))).rejects.toMatchObject({
      code: 'TRANSPORT_PERMANENT',
      responseCode: 550,
    });
    primary.fail(undefined);
    expect((await route.send(composeFor(route, refused))).transport).toBe('primary');
    expect(spare.outbox).toHaveLength(0);
  });

  it('a transient failure without a fallback keeps its backpressure for the worker', async () => {
    const primary = switchable('primary');
    const route = routeTransport({ routes: [{ when: {}, transport: primary.transport }] });
    primary.fail(transient());
    const error = await route.send(composeFor(route, message())).catch((e: unknown) => e);
    expect(error).toMatchObject({ responseCode: 421 });
    expect((error as MailroomError).backpressure).toBeUndefined();
  });

  it('asks the core to compose once for every route: signed if any route signs, fields if any wants them', async () => {
    const sinkA = await startSmtpSink();
    const sinkB = await startSmtpSink();
    const shared = routeTransport({
      routes: [{ when: {}, transport: smtpTransport(`${sinkA.url}?textEncoding=quoted-printable`) }],
      fallback: smtpTransport(sinkB.url),
    });
    expect(shared.capabilities).toMatchObject({ dkim: true, textEncoding: 'quoted-printable' });
    expect(shared.capabilities.fields).toBeUndefined();
    const mixed = routeTransport({ routes: [{ when: {}, transport: memoryTransport() }], fallback: shared });
    expect(mixed.capabilities).toMatchObject({ dkim: true, fields: true });
    await shared.close?.();
    await Promise.all([sinkA.close(), sinkB.close()]);
  });

  it('verify passes while the fallback can send, and the failing route starts failed over', async () => {
    const down = smtpTransport({ host: '127.0.0.1', port: 1, connectionTimeout: 500 });
    const sink = await startSmtpSink();
    const route = routeTransport({
      routes: [{ when: {}, transport: down }],
      fallback: smtpTransport(sink.url),
    });
    await route.verify?.();
    expect((await route.send(composeFor(route, message()))).transport).toBe('smtp');
    expect(sink.messages).toHaveLength(1);
    const alone = routeTransport({ routes: [{ when: {}, transport: down }] });
    await expect(alone.verify?.()).rejects.toMatchObject({ code: 'TRANSPORT_TRANSIENT' });
    await route.close?.();
    await sink.close();
  });
});

describe('the engine and routed transports', () => {
  it('stores which transport sent each delivery, shown as the reply prefix', async () => {
    const tx = switchable('tx');
    const bulk = switchable('bulk');
    const mailroom = createMailroom({
      store: memoryStore(),
      transport: routeTransport({
        routes: [{ when: { kind: 'broadcast' }, transport: bulk.transport }],
        fallback: tx.transport,
      }),
      worker: { pollMs: 10, flushMs: 10 },
    });
    const events: Array<{ address: string; transport: string | null }> = [];
    mailroom.on('delivery', (e) => events.push({ address: e.address, transport: e.transport }));
    const { secret, project } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    const sent = await mailroom.send(secret, {
      sender: 'news@acme.test',
      subject: 'Receipt',
      message: 'Thanks',
      recipients: ['ann@example.org'],
    });
    const cast = await mailroom.broadcast(secret, {
      sender: 'news@acme.test',
      subject: 'News',
      message: 'Hello',
      recipients: ['bob@example.org'],
    });
    await mailroom.worker.drain();
    const [one] = await mailroom.listDeliveries(secret, sent.ref);
    const [two] = await mailroom.listDeliveries(secret, cast.ref);
    expect(one?.lastResponse).toBe('tx: 250 OK (memory)');
    expect(sentVia(one?.lastResponse)).toBe('tx');
    expect(sentVia(two?.lastResponse)).toBe('bulk');
    // The `delivery` event names it too.
    expect(events.sort((a, b) => a.address.localeCompare(b.address))).toEqual([
      { address: 'ann@example.org', transport: 'tx' },
      { address: 'bob@example.org', transport: 'bulk' },
    ]);
    expect(tx.outbox[0]?.mailing).toMatchObject({ projectId: project.id, kind: 'message', ref: sent.ref });
    expect(bulk.outbox[0]?.mailing).toMatchObject({ kind: 'broadcast', ref: cast.ref });

    // The delivery's dashboard page says which transport sent it.
    const app = Fastify();
    await app.register(mailroomPlugin, { mailroom });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const cookie = await dashboardCookie(base, secret);
    const page = await fetch(
      `${base}/dashboard/broadcasts/${encodeURIComponent(cast.ref)}/delivery?address=bob%40example.org`,
      { headers: { cookie } },
    );
    expect(page.status).toBe(200);
    const body = await page.text();
    expect(body).toContain('<dt>Sent via</dt><dd>bulk</dd>');
    expect(body).toContain('bulk: 250 OK (memory)');
    await app.close();
    await mailroom.close();
  });

  it('a paused transport makes the worker wait, and the pause never fails a delivery', async () => {
    let pausedCalls = 0;
    const sendTimes: number[] = [];
    const transport = memoryTransport({
      failWith: () => {
        sendTimes.push(performance.now());
        if (pausedCalls++ < 3) {
          return new MailroomError('TRANSPORT_TRANSIENT', 'SendingPausedException: sending paused', {
            backpressure: 'pause',
          });
        }
        return undefined;
      },
    });
    const mailroom = createMailroom({
      store: memoryStore(),
      transport,
      // One attempt only: a pause counted as an attempt would fail the delivery at once.
      worker: {
        maxAttempts: 1,
        transportPauseMs: 100,
        retryBaseMs: 10,
        pollMs: 10,
        flushMs: 10,
        concurrency: 1,
      },
    });
    const { secret, project } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    const { ref } = await mailroom.send(secret, {
      sender: 'news@acme.test',
      subject: 'Hi',
      message: 'Hello',
      recipients: ['ann@example.org'],
    });
    mailroom.worker.start();
    const deadline = Date.now() + 10_000;
    while ((await mailroom.listDeliveries(secret, ref))[0]?.status !== 'sent') {
      if (Date.now() > deadline) throw new Error('not sent');
      await new Promise((r) => setTimeout(r, 20));
    }
    await mailroom.worker.stop();
    expect(transport.outbox).toHaveLength(1);
    expect(pausedCalls).toBe(4);
    // Pauses of 100, 200 and 400 ms between the attempts (doubling while the account stays paused).
    const gaps = sendTimes.slice(1).map((t, i) => t - (sendTimes[i] as number));
    expect(gaps[0]).toBeGreaterThanOrEqual(95);
    expect(gaps[1]).toBeGreaterThanOrEqual(195);
    expect(gaps[2]).toBeGreaterThanOrEqual(395);
    await mailroom.close();
  });
});
