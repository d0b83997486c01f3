import type { AddressInfo } from 'node:net';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/** `GET /metrics` counts webhook attempts by outcome and shows the age of the oldest pending event. */

function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('GET /metrics: webhooks', () => {
  let mailroom: Mailroom;
  let receiver: WebhookReceiver;
  let app: FastifyInstance;
  let url: string;
  let secret: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    mailroom = createMailroom({
      store: memoryStore(),
      transport: memoryTransport(),
      fetch: { allowHosts: [receiver.host] },
      webhooks: { retryScheduleMs: [0] },
    });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    await mailroom.admin.addSender(created.project.id, { address: 'news@acme.test' });
    receiver.secret = (
      await mailroom.webhooks.add(secret, { url: receiver.url, events: ['email.sent'] })
    ).secret;
    app = Fastify();
    await app.register(mailroomPlugin, { mailroom, metrics: { processMetrics: false } });
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/metrics`;
  });

  afterAll(async () => {
    await app.close();
    await mailroom.close();
    await receiver.close();
  });

  it('counts delivered, retried and failed attempts; the oldest pending age falls to 0 once sent', async () => {
    await mailroom.broadcast(secret, {
      subject: 'Hi',
      sender: 'news@acme.test',
      message: 'Hello',
      recipients: ['a@example.test', 'b@example.test', 'c@example.test'],
    });
    await mailroom.worker.drain();
    await new Promise((r) => setTimeout(r, 20));
    const pending = await (await fetch(url)).text();
    expect(sample(pending, 'mailroom_webhook_oldest_pending_age_seconds')).toBeGreaterThan(0);

    // a: 200; b: 500 then 200; c: 500 twice (the schedule allows one retry).
    const seen = new Map<string, number>();
    receiver.respond = ({ id }) => {
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      const order = [...seen.keys()].indexOf(id);
      return order === 0 ? 200 : order === 1 && n > 1 ? 200 : 500;
    };
    await mailroom.webhooks.drain();
    await mailroom.webhooks.drain();
    const text = await (await fetch(url)).text();
    expect(sample(text, 'mailroom_webhook_attempts_total', '{outcome="delivered"}')).toBe(2);
    expect(sample(text, 'mailroom_webhook_attempts_total', '{outcome="retry"}')).toBe(2);
    expect(sample(text, 'mailroom_webhook_attempts_total', '{outcome="failed"}')).toBe(1);
    expect(sample(text, 'mailroom_webhook_duration_seconds_count')).toBe(5);
    expect(sample(text, 'mailroom_webhook_oldest_pending_age_seconds')).toBe(0);
  });
});
