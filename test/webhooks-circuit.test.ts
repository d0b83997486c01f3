import { createMailroom, type Mailroom, type Store } from '@mailroom/core';
import { memoryTransport } from '@mailroom/memory';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storeCases } from './support/stores.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * An endpoint's circuit (issue 30): failed attempts in a row open it; while open nothing is POSTed to
 * it, its messages wait without spending retries and new events for it are written due when it may be
 * tried again; the endpoint is listed `circuit_open` until a probe succeeds; another endpoint is served
 * meanwhile.
 */
describe.each(storeCases())('webhook circuits on $name', ({ make }) => {
  let store: Store;
  let mailroom: Mailroom;
  let failing: WebhookReceiver;
  let fine: WebhookReceiver;
  let secret: string;

  beforeEach(async () => {
    failing = await startWebhookReceiver();
    fine = await startWebhookReceiver();
    store = await make();
    mailroom = createMailroom({
      store,
      transport: memoryTransport(),
      fetch: { allowHosts: [failing.host, fine.host] },
      webhooks: { retryScheduleMs: [10, 10, 10], circuitFailures: 3, circuitOpenMs: 1_500 },
    });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    await mailroom.admin.addSender(created.project.id, { address: 'news@acme.test' });
  });

  afterEach(async () => {
    await mailroom.close();
    await failing.close();
    await fine.close();
  });

  const broadcast = (count: number, from = 0) =>
    mailroom.broadcast(secret, {
      subject: 'Hi',
      sender: 'news@acme.test',
      message: '<p>Hello</p>',
      recipients: Array.from({ length: count }, (_, i) => ({ address: `u${from + i}@example.test` })),
    });

  it('opens after failures in a row, holds the messages unattempted, and closes on a good probe', async () => {
    const bad = await mailroom.webhooks.add(secret, { url: failing.url, events: ['email.sent'] });
    failing.secret = bad.secret;
    const good = await mailroom.webhooks.add(secret, { url: fine.url, events: ['email.sent'] });
    fine.secret = good.secret;
    failing.respond = () => 503;
    await broadcast(40);
    await mailroom.worker.drain();
    await mailroom.webhooks.drain();

    // Three failures opened the circuit; at most the POSTs already in flight then went out.
    expect(failing.received.length).toBeGreaterThanOrEqual(3);
    expect(failing.received.length).toBeLessThan(40);
    const sentWhileClosed = failing.received.length;
    const listed = new Map((await mailroom.webhooks.list(secret)).map((e) => [e.id, e]));
    const open = listed.get(bad.endpoint.id);
    expect(open?.state).toBe('circuit_open');
    expect(open?.circuitOpenUntil?.getTime()).toBeGreaterThan(Date.now());
    expect(listed.get(good.endpoint.id)?.state).toBe('healthy');
    // The other endpoint got everything meanwhile.
    expect(new Set(fine.received.filter((r) => r.status === 204).map((r) => r.id)).size).toBe(40);

    // The waiting messages are pending, due when the circuit opens again, no retry spent on them.
    const messages = await mailroom.webhooks.messages(secret, { endpointId: bad.endpoint.id, limit: 100 });
    expect(messages).toHaveLength(40);
    expect(messages.every((m) => m.status === 'pending')).toBe(true);
    const untried = messages.filter((m) => m.attempts === 0);
    expect(untried.length).toBe(40 - sentWhileClosed);
    for (const m of untried) expect(m.nextAttemptAt.getTime()).toBe(open?.circuitOpenUntil?.getTime());

    // New events for it are written due then too, and a drain sends nothing to it meanwhile.
    await broadcast(5, 100);
    await mailroom.worker.drain();
    await mailroom.webhooks.drain();
    expect(failing.received).toHaveLength(sentWhileClosed);
    const later = await mailroom.webhooks.messages(secret, { endpointId: bad.endpoint.id, limit: 100 });
    expect(later.filter((m) => m.attempts === 0)).toHaveLength(untried.length + 5);

    // Once the time has passed, one probe goes; it succeeds and the rest follow.
    failing.respond = () => 200;
    mailroom.worker.start();
    await failing.waitFor(
      (r) => new Set(r.filter((x) => x.status === 200).map((x) => x.id)).size >= 45,
      20_000,
    );
    await mailroom.worker.stop();
    const closed = (await mailroom.webhooks.list(secret)).find((e) => e.id === bad.endpoint.id);
    expect(closed).toMatchObject({ state: 'healthy', circuitOpenUntil: null, failingSince: null });
    expect(failing.received.every((r) => r.verified)).toBe(true);
    const done = await mailroom.webhooks.messages(secret, { endpointId: bad.endpoint.id, limit: 100 });
    expect(done.every((m) => m.status === 'delivered')).toBe(true);
    // Every message was attempted at most as often as it was POSTed (none counted while held back).
    const posts = new Map<string, number>();
    for (const r of failing.received) posts.set(r.id, (posts.get(r.id) ?? 0) + 1);
    for (const m of done) expect(m.attempts).toBe(posts.get(m.id));
  });

  it('a failed probe keeps it open twice as long; enabling the endpoint closes it', async () => {
    const bad = await mailroom.webhooks.add(secret, { url: failing.url, events: ['email.sent'] });
    failing.secret = bad.secret;
    failing.respond = () => 500;
    await broadcast(3);
    await mailroom.worker.drain();
    await mailroom.webhooks.drain();
    const first = (await mailroom.webhooks.list(secret))[0]?.circuitOpenUntil;
    expect(first).toBeInstanceOf(Date);
    const posted = failing.received.length;
    await new Promise((resolve) => setTimeout(resolve, (first?.getTime() ?? 0) - Date.now() + 50));
    await mailroom.webhooks.drain();
    // One probe, which failed: open again, for about twice the first time.
    expect(failing.received).toHaveLength(posted + 1);
    const second = (await mailroom.webhooks.list(secret))[0]?.circuitOpenUntil;
    expect((second?.getTime() ?? 0) - Date.now()).toBeGreaterThan(2_000);

    await mailroom.webhooks.setEnabled(secret, bad.endpoint.id, false);
    const enabled = await mailroom.webhooks.setEnabled(secret, bad.endpoint.id, true);
    expect(enabled).toMatchObject({ state: 'healthy', circuitOpenUntil: null });
    expect((await store.getWebhookEndpoint(bad.endpoint.id))?.circuitOpenUntil).toBeNull();
  });
});
