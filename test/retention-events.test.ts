import {
  createMailroom,
  type Mailroom,
  MailroomError,
  type MailroomOptions,
  type ManualClock,
  manualClock,
} from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storeCases } from './support/stores.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * The retention sweep of a running worker deletes events, and the webhook messages and attempts that
 * carried them, past `retention.eventDays` (30 by default), but never a message still to be sent.
 */
const START = new Date('2031-05-01T00:00:00.000Z');
const DAY = 86_400_000;

describe.each(storeCases())('event retention on $name', ({ make }) => {
  let receiver: WebhookReceiver;
  let failing: WebhookReceiver;
  const opened: Mailroom[] = [];

  beforeEach(async () => {
    receiver = await startWebhookReceiver();
    failing = await startWebhookReceiver();
    failing.respond = () => 500;
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((m) => m.close()));
    await receiver.close();
    await failing.close();
  });

  async function engine(extra: Partial<MailroomOptions> = {}) {
    const clock: ManualClock = manualClock(START);
    const mailroom = createMailroom({
      store: await make(),
      transport: memoryTransport(),
      clock,
      fetch: { allowHosts: [receiver.host, failing.host] },
      worker: { pollMs: 10 },
      ...extra,
      // Retries far in the future: a message answered 500 stays pending through the test.
      webhooks: { retryScheduleMs: [60 * DAY], ...extra.webhooks },
    });
    opened.push(mailroom);
    const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    const good = await mailroom.webhooks.add(secret, { url: receiver.url, events: ['email.sent'] });
    receiver.secret = good.secret;
    await mailroom.webhooks.add(secret, { url: failing.url, events: ['email.sent'] });
    await mailroom.broadcast(secret, {
      subject: 'Hi',
      sender: 'news@acme.test',
      message: '<p>Hello</p>',
      recipients: [{ address: 'a@example.test' }],
    });
    await mailroom.worker.drain();
    await mailroom.webhooks.drain();
    return { mailroom, secret, clock };
  }

  async function counts(mailroom: Mailroom, secret: string) {
    const messages = await mailroom.webhooks.messages(secret, { limit: 100 });
    return {
      events: (await mailroom.listEvents(secret, { limit: 100 })).items.length,
      messages: messages.map((m) => m.status).sort(),
      attempts: (await mailroom.webhooks.attempts(secret, { limit: 100 })).length,
    };
  }

  it('a running worker deletes events, settled messages and attempts past 30 days, not a pending message', async () => {
    const { mailroom, secret, clock } = await engine({ retention: { sweepEveryMs: 20 } });
    // One email.sent and broadcast.completed; one message delivered, one pending after a 500.
    const before = await counts(mailroom, secret);
    expect(before).toEqual({ events: 2, messages: ['delivered', 'pending'], attempts: 2 });

    clock.advance(29 * DAY);
    mailroom.worker.start();
    await new Promise((r) => setTimeout(r, 150));
    expect(await counts(mailroom, secret)).toEqual(before);

    clock.advance(2 * DAY);
    await expect
      .poll(() => counts(mailroom, secret), { timeout: 3_000 })
      .toEqual({ events: 0, messages: ['pending'], attempts: 0 });
    await mailroom.worker.stop();
  });

  it('keeps everything with eventDays: Infinity', async () => {
    const { mailroom, secret, clock } = await engine({
      retention: { sweepEveryMs: 20, eventDays: Number.POSITIVE_INFINITY },
    });
    clock.advance(400 * DAY);
    mailroom.worker.start();
    await new Promise((r) => setTimeout(r, 150));
    await mailroom.worker.stop();
    expect((await counts(mailroom, secret)).events).toBe(2);
  });
});

it('refuses an event retention that is not a positive number of days', () => {
  for (const eventDays of [0, -1, Number.NaN]) {
    expect(() =>
      createMailroom({ store: memoryStore(), transport: memoryTransport(), retention: { eventDays } }),
    ).toThrow(MailroomError);
  }
});
