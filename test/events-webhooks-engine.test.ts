import {
  createMailroom,
  type Mailroom,
  MailroomError,
  type MailroomOptions,
  type Transport,
} from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { storeCases } from './support/stores.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

describe.each(storeCases())('events and webhooks on $name', ({ make }) => {
  let mailroom: Mailroom;
  // The engine of the running test, closed once (a test may replace it with `engine()`).
  let live: Mailroom | undefined;
  let receiver: WebhookReceiver;
  let secret: string;
  let projectId: string;

  async function engine(options: Partial<MailroomOptions> = {}): Promise<void> {
    await live?.close();
    mailroom = createMailroom({
      store: await make(),
      transport: memoryTransport({
        failWith: (m) =>
          m.to.address.startsWith('refused')
            ? new MailroomError('TRANSPORT_PERMANENT', '550 5.7.1 refused', { response: '550 5.7.1 refused' })
            : m.to.address.startsWith('later')
              ? new MailroomError('TRANSPORT_TRANSIENT', '451 4.3.0 try later', {
                  response: '451 4.3.0 try later',
                })
              : undefined,
      }),
      fetch: { allowHosts: [receiver.host] },
      // Retries and an endpoint's circuit (open after five failures in a row) at test speed.
      webhooks: { retryScheduleMs: [20, 20, 20, 20, 20], circuitOpenMs: 20 },
      worker: { retryBaseMs: 60_000 },
      ...options,
    });
    live = mailroom;
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    projectId = created.project.id;
    await mailroom.admin.addSender(projectId, { address: 'news@acme.test' });
  }

  const broadcast = (addresses: string[]) =>
    mailroom.broadcast(secret, {
      subject: 'Hi',
      sender: 'news@acme.test',
      message: '<p>Hello</p>',
      recipients: addresses.map((address) => ({ address })),
    });

  /** Works off everything due, then sends the webhooks until the receiver has `count` verified ones. */
  async function deliverAll(): Promise<void> {
    await mailroom.worker.drain();
    await mailroom.webhooks.drain();
  }

  beforeEach(async () => {
    receiver = await startWebhookReceiver();
    await engine();
  });

  afterEach(async () => {
    await live?.close();
    live = undefined;
    await receiver.close();
  });

  it('writes one event per outcome, readable in pages and by filter', async () => {
    await mailroom.admin.suppress(projectId, 'blocked@example.test', 'manual');
    await mailroom.admin.setSubscription(projectId, 'gone@example.test', 'unsubscribed');
    const { ref } = await broadcast([
      'a@example.test',
      'b@example.test',
      'blocked@example.test',
      'gone@example.test',
      'refused@example.test',
      'later@example.test',
    ]);
    // later@ waits a minute for its retry (an email.delivery_delayed): left queued.
    await mailroom.worker.drain({ retries: 'leave' });
    const all = await mailroom.listEvents(secret, { limit: 1000 });
    const types = all.items
      .map((e) => `${e.type} ${e.data.delivery?.address ?? e.data.address ?? ''}`.trim())
      .sort();
    // The admin API's unsubscribe is announced like a link's (it is one), with the address.
    // A refusal at send time is a bounce too, with its reason (here a block of the sender: not suppressed,
    // and held until resumed, so delayed rather than failed).
    expect(types).toEqual([
      'contact.unsubscribed gone@example.test',
      'email.bounced refused@example.test',
      'email.delivery_delayed later@example.test',
      'email.delivery_delayed refused@example.test',
      'email.sent a@example.test',
      'email.sent b@example.test',
      'email.suppressed blocked@example.test',
      'email.suppressed gone@example.test',
    ]);
    const sent = all.items.find((e) => e.data.delivery?.address === 'a@example.test');
    expect(sent).toMatchObject({
      type: 'email.sent',
      data: { project_id: projectId, mailing: { ref, kind: 'broadcast' }, response: expect.any(String) },
    });
    expect(sent?.data.delivery?.message_id).toMatch(/^<.+@.+>$/);
    expect(JSON.stringify(all.items)).not.toContain('Hello');
    const held = all.items.find(
      (e) => e.type === 'email.delivery_delayed' && e.data.delivery?.address === 'refused@example.test',
    );
    expect(held?.data).toMatchObject({ response: '550 5.7.1 refused' });
    expect(held?.data.error).toMatch(/held until resumed/);
    const bounced = all.items.find((e) => e.type === 'email.bounced');
    expect(bounced?.data.bounce).toMatchObject({ class: 'sender-side', status: '5.7.1', source: 'smtp' });

    const page1 = await mailroom.listEvents(secret, { limit: 4 });
    expect(page1.items).toHaveLength(4);
    const page2 = await mailroom.listEvents(secret, { limit: 4, after: page1.next ?? '' });
    expect(page2.next).toBeNull();
    expect([...page1.items, ...page2.items].map((e) => e.id)).toEqual(all.items.map((e) => e.id));
    const byAddress = await mailroom.listEvents(secret, { address: 'refused@example.test' });
    expect(byAddress.items.map((e) => e.type).sort()).toEqual(['email.bounced', 'email.delivery_delayed']);
    const byType = await mailroom.listEvents(secret, { types: ['email.sent'], mailingRef: ref });
    expect(byType.items).toHaveLength(2);
    await expect(
      mailroom.listEvents(secret, { types: ['email.nope' as 'email.sent'] }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
    const other = await mailroom.admin.createProject({ name: 'Other' });
    expect((await mailroom.listEvents(other.secret)).items).toEqual([]);
  });

  it('announces an unsubscribe through the admin API once, and no subscribe', async () => {
    const added = await mailroom.webhooks.add(secret, {
      url: receiver.url,
      events: ['contact.unsubscribed'],
    });
    receiver.secret = added.secret;
    await mailroom.admin.setSubscription(projectId, 'gone@Example.TEST', 'unsubscribed');
    await mailroom.admin.setSubscription(projectId, 'gone@example.test', 'unsubscribed');
    await mailroom.admin.setSubscription(projectId, 'gone@example.test', 'subscribed');
    await mailroom.admin.setSubscription(projectId, 'kept@example.test', 'subscribed');
    const events = await mailroom.listEvents(secret, { limit: 100 });
    expect(events.items.map((e) => [e.type, e.data.address])).toEqual([
      ['contact.unsubscribed', 'gone@example.test'],
    ]);
    const byAddress = await mailroom.listEvents(secret, { address: 'gone@example.test' });
    expect(byAddress.items).toHaveLength(1);
    await mailroom.webhooks.drain();
    expect(receiver.received.map((r) => [r.payload.type, r.verified])).toEqual([
      ['contact.unsubscribed', true],
    ]);
  });

  it('emits broadcast.completed and broadcast.cancelled with the change', async () => {
    const done = await broadcast(['a@example.test']);
    await mailroom.worker.drain();
    // Event ids sort by their millisecond, then by chance: the cancellation must come a millisecond later
    // for the list's order to be the order they happened in (both within one millisecond failed, once).
    const completedBy = Date.now();
    await vi.waitUntil(() => Date.now() > completedBy);
    const cancelled = await mailroom.broadcast(secret, {
      subject: 'Later',
      sender: 'news@acme.test',
      message: '<p>x</p>',
      recipients: [{ address: 'b@example.test' }],
      options: { scheduleFor: new Date(Date.now() + 3_600_000).toISOString() },
    });
    await mailroom.cancel(secret, cancelled.ref);
    await mailroom.cancel(secret, cancelled.ref);
    const events = await mailroom.listEvents(secret, {
      types: ['broadcast.completed', 'broadcast.cancelled'],
    });
    expect(events.items.map((e) => [e.type, e.data.mailing?.ref])).toEqual([
      ['broadcast.completed', done.ref],
      ['broadcast.cancelled', cancelled.ref],
    ]);
  });

  it('POSTs each subscribed event once, signed (verified with standardwebhooks)', async () => {
    const added = await mailroom.webhooks.add(secret, { url: receiver.url, events: ['email.sent'] });
    receiver.secret = added.secret;
    expect(added.secret).toMatch(/^whsec_/);
    expect(added.endpoint).toMatchObject({ url: receiver.url, events: ['email.sent'], enabled: true });
    expect(JSON.stringify(await mailroom.webhooks.list(secret))).not.toContain(added.secret);
    const addresses = Array.from({ length: 40 }, (_, i) => `u${i}@example.test`);
    await broadcast([...addresses, 'refused@example.test']);
    await deliverAll();
    await receiver.waitFor((r) => r.length >= 40);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    expect(receiver.received.map((r) => r.payload.type).every((t) => t === 'email.sent')).toBe(true);
    const got = receiver.received.map((r) =>
      String((r.payload.data.delivery as { address: string }).address),
    );
    expect(got.sort()).toEqual([...addresses].sort());
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(40);
    const attempts = await mailroom.webhooks.attempts(secret, { limit: 100 });
    expect(attempts).toHaveLength(40);
    expect(attempts.every((a) => a.statusCode === 204 && a.latencyMs >= 0)).toBe(true);
  });

  it('retries a failing receiver with the same webhook-id until it answers 2xx', async () => {
    const { secret: whsec } = await mailroom.webhooks.add(secret, { url: receiver.url });
    receiver.secret = whsec;
    receiver.respond = ({ count }) => (count < 6 ? 500 : 200);
    await broadcast(['a@example.test', 'b@example.test']);
    await mailroom.worker.drain();
    // The sender loop runs with the worker; the retries are 20 ms apart here.
    mailroom.worker.start();
    await receiver.waitFor(
      (r) => new Set(r.filter((x) => x.status === 200).map((x) => x.payload.data.event_id)).size >= 3,
    );
    await mailroom.worker.stop();
    const ok = receiver.received.filter((r) => r.status === 200);
    // Every retry of a message carried its first webhook-id.
    for (const r of receiver.received)
      expect(
        receiver.received
          .filter((x) => x.id === r.id)
          .every((x) => x.payload.data.event_id === r.payload.data.event_id),
      ).toBe(true);
    expect(new Set(ok.map((r) => r.payload.type))).toEqual(new Set(['email.sent', 'broadcast.completed']));
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    const retried = (await mailroom.webhooks.attempts(secret, { limit: 100 })).filter(
      (a) => a.statusCode === 500,
    );
    expect(retried).toHaveLength(6);
    expect((await mailroom.webhooks.messages(secret)).every((m) => m.status === 'delivered')).toBe(true);
  });

  it('while mail is in flight, sends events at the busy rate; once the worker is idle, the rest at once', async () => {
    // The message to slow@ is held until released: the worker is busy until then.
    const { transport, started, release } = heldTransport();
    await engine({ transport, webhooks: { busyRatePerSecond: 10 } });
    const added = await mailroom.webhooks.add(secret, { url: receiver.url, events: ['email.sent'] });
    receiver.secret = added.secret;
    mailroom.worker.start();
    await mailroom.send(secret, {
      subject: 'Hold',
      sender: 'news@acme.test',
      message: '<p>Hold</p>',
      recipients: [{ address: 'slow@example.test' }],
    });
    await started;
    const t0 = performance.now();
    await broadcast(Array.from({ length: 30 }, (_, i) => `r${i}@example.test`));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const whileBusy = receiver.received.length;
    const seconds = (performance.now() - t0) / 1000;
    // 10 per second, in bursts: at most 5 per started 500 ms window, however fast the machine (uncapped,
    // all 30 go at once).
    expect(whileBusy).toBeLessThanOrEqual(5 * (Math.floor(seconds * 2) + 1));
    expect(whileBusy).toBeGreaterThanOrEqual(1);
    release();
    await receiver.waitFor((r) => r.length >= 31);
    await mailroom.worker.stop();
    expect(receiver.received.every((r) => r.verified && r.payload.type === 'email.sent')).toBe(true);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(31);
  });

  it('while a broadcast’s events wait behind its mail, sends a single message’s event ahead of them', async () => {
    // As above: the message to slow@ is held, so the worker stays busy and the sender paced (4 per second).
    const { transport, started, release } = heldTransport();
    await engine({ transport, webhooks: { busyRatePerSecond: 4 } });
    const added = await mailroom.webhooks.add(secret, { url: receiver.url, events: ['email.sent'] });
    receiver.secret = added.secret;
    mailroom.worker.start();
    const single = (address: string) =>
      mailroom.send(secret, {
        subject: 'Reset',
        sender: 'news@acme.test',
        message: '<p>Reset</p>',
        recipients: [{ address }],
      });
    await single('slow@example.test');
    await started;
    // More than the sender holds claimed at this rate (120), so that its hand is full of them.
    const news = Array.from({ length: 240 }, (_, i) => `news${i}@example.test`);
    await broadcast(news);
    const address = (r: (typeof receiver.received)[number]) =>
      (r.payload.data.delivery as { address?: string } | undefined)?.address;
    // The broadcast's events are queued and going out at the paced rate when the single message is sent.
    await receiver.waitFor((r) => r.length >= 1);
    await single('reset@example.test');
    await receiver.waitFor((r) => r.some((x) => address(x) === 'reset@example.test'));
    const newsBefore = receiver.received.filter((r) => address(r)?.startsWith('news')).length;
    // In arrival order it would have waited for all 240; behind a full hand, for 60 (15 s at this rate).
    expect(newsBefore).toBeLessThan(30);
    release();
    await receiver.waitFor((r) => r.length >= news.length + 2);
    await mailroom.worker.stop();
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(news.length + 2);
  });

  it('gives up after the last retry, disables an endpoint failing too long, and replays a failed message', async () => {
    await engine({ webhooks: { retryScheduleMs: [10, 10], disableAfterMs: 15 } });
    const added = await mailroom.webhooks.add(secret, { url: receiver.url, events: ['email.sent'] });
    receiver.secret = added.secret;
    receiver.respond = () => 503;
    await broadcast(['a@example.test']);
    await mailroom.worker.drain();
    const until = Date.now() + 10_000;
    while (Date.now() < until) {
      await mailroom.webhooks.drain();
      const [m] = await mailroom.webhooks.messages(secret);
      if (m?.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 15));
    }
    const [message] = await mailroom.webhooks.messages(secret);
    expect(message).toMatchObject({ status: 'failed', attempts: 3, lastStatusCode: 503 });
    const [endpoint] = await mailroom.webhooks.list(secret);
    expect(endpoint?.enabled).toBe(false);
    expect(endpoint?.disabledReason).toMatch(/every attempt failed since/);

    await mailroom.webhooks.setEnabled(secret, added.endpoint.id, true);
    receiver.respond = () => 200;
    await mailroom.webhooks.replay(secret, message?.id ?? '');
    await mailroom.webhooks.drain();
    const ids = receiver.received.map((r) => r.id);
    expect(new Set(ids)).toEqual(new Set([message?.id]));
    expect(receiver.received.at(-1)?.status).toBe(200);
    expect((await mailroom.webhooks.messages(secret))[0]?.status).toBe('delivered');
    await expect(mailroom.webhooks.replay(secret, 'msg_nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('sends a test event to one endpoint, signs with a rotated secret, and removes endpoints', async () => {
    const added = await mailroom.webhooks.add(secret, { url: receiver.url });
    const { secret: rotated } = await mailroom.webhooks.rotateSecret(secret, added.endpoint.id);
    expect(rotated).not.toBe(added.secret);
    receiver.secret = rotated;
    const { messageId } = await mailroom.webhooks.sendTest(secret, added.endpoint.id);
    await mailroom.webhooks.drain();
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]).toMatchObject({
      id: messageId,
      verified: true,
      payload: { data: { test: true } },
    });
    const other = await mailroom.admin.createProject({ name: 'Other' });
    await expect(mailroom.webhooks.remove(other.secret, added.endpoint.id)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await mailroom.webhooks.remove(secret, added.endpoint.id);
    expect(await mailroom.webhooks.list(secret)).toEqual([]);
    await expect(
      mailroom.webhooks.add(secret, { url: receiver.url, events: ['email.nope'] }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
  });

  it('refuses private and metadata addresses when added and when sent (DNS rebinding)', async () => {
    for (const url of [
      'http://10.1.2.3/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]:9/hook',
      'http://127.0.0.1:9/hook',
      'file:///etc/passwd',
    ]) {
      await expect(mailroom.webhooks.add(secret, { url })).rejects.toMatchObject({ code: 'FETCH_REFUSED' });
    }
    // A name that resolves to a public address when added and to the metadata address when sent.
    let answer = '93.184.216.34';
    const connected: string[] = [];
    await engine({
      fetch: {
        resolver: async () => [{ address: answer, family: 4 }],
        connectHook: (target) => {
          connected.push(target.address);
          throw new Error('no connection may be opened in this test');
        },
      },
    });
    const added = await mailroom.webhooks.add(secret, { url: 'http://hooks.example.test/hook' });
    answer = '169.254.169.254';
    await mailroom.webhooks.sendTest(secret, added.endpoint.id);
    await mailroom.webhooks.drain();
    const [attempt] = await mailroom.webhooks.attempts(secret);
    expect(attempt?.statusCode).toBeNull();
    expect(attempt?.error).toMatch(/169\.254\.169\.254/);
    // Retried on the schedule like any failure (the policy is this process's), never connected.
    expect((await mailroom.webhooks.messages(secret))[0]?.status).toBe('pending');
    expect(connected).toEqual([]);
  });
});

/**
 * A memory transport that holds the message to an address starting with `slow` until `release()`:
 * `started` resolves when it is held, and the worker stays busy until then.
 */
function heldTransport(): { transport: Transport; started: Promise<void>; release: () => void } {
  const inner = memoryTransport();
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let slowStarted = () => {};
  const started = new Promise<void>((resolve) => {
    slowStarted = resolve;
  });
  const transport: Transport = {
    name: 'held',
    capabilities: inner.capabilities,
    async send(message) {
      if (message.envelope.to[0]?.startsWith('slow')) {
        slowStarted();
        await held;
      }
      return inner.send(message);
    },
  };
  return { transport, started, release };
}
