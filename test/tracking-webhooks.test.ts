import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * Tracking hits as webhook events: a broadcast over SMTP, its link followed and its pixel loaded over
 * HTTP, and the receiver gets `email.clicked` and `email.opened`, verified with `standardwebhooks`, each
 * with its verdict (`machine`) and the click's URL; a repeated open sends no second event.
 */

const BROWSER =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

describe('tracking events reach the webhook receiver', () => {
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  let mailroom: Mailroom;
  let app: FastifyInstance;
  let base = '';

  beforeEach(async () => {
    sink = await startSmtpSink();
    receiver = await startWebhookReceiver();
    mailroom = createMailroom({
      store: sqlStore({ url: join(mkdtempSync(join(tmpdir(), 'mailroom-track-hooks-')), 'mailroom.db') }),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      fetch: { allowHosts: [receiver.host] },
      tracking: { baseUrl: () => base, opens: true, clicks: true, scannerWindowMs: 0, flushMs: 20 },
    });
    app = Fastify();
    await app.register(mailroomPlugin, { mailroom });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    await app.close();
    await mailroom.close();
    await receiver.close();
    await sink.close();
  });

  it('sends verified email.clicked and email.opened with the URL and the verdict', async () => {
    const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    const added = await mailroom.webhooks.add(secret, {
      url: receiver.url,
      events: ['email.opened', 'email.clicked'],
    });
    receiver.secret = added.secret;
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'News',
      sender: 'news@acme.test',
      message:
        '<html><body><a href="https://shop.example.test/?u={{ id }}">Shop</a><a href="https://b.example.test/">B</a></body></html>',
      recipients: [{ address: 'ann@example.test', variables: { id: 'a1' } }],
    });
    await mailroom.worker.drain();
    const [message] = await sink.waitFor(1);
    const html = String(message?.parsed.html);
    const link = /href="([^"]+\/t\/c\/[^"]+)"/.exec(html)?.[1] ?? '';
    const pixel = /src="([^"]+\/t\/o\/[^"]+)"/.exec(html)?.[1] ?? '';
    const headers = { 'user-agent': BROWSER };
    expect((await fetch(link, { redirect: 'manual', headers })).headers.get('location')).toBe(
      'https://shop.example.test/?u=a1',
    );
    await fetch(pixel, { headers });
    await fetch(pixel, { headers: { 'user-agent': 'Mozilla/5.0' } });
    await fetch(pixel, { headers });
    await mailroom.worker.stop();
    // The hits are written behind; then their events go out.
    for (let i = 0; i < 100 && receiver.received.length < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 30));
      await mailroom.webhooks.drain();
    }
    const got = receiver.received.map((r) => ({
      type: r.payload.type,
      verified: r.verified,
      data: r.payload.data,
    }));
    expect(got.every((g) => g.verified)).toBe(true);
    const clicked = got.filter((g) => g.type === 'email.clicked');
    expect(clicked).toHaveLength(1);
    expect(clicked[0]?.data).toMatchObject({
      url: 'https://shop.example.test/?u=a1',
      machine: false,
      mailing: { ref, kind: 'broadcast' },
      delivery: { address: 'ann@example.test' },
    });
    const opened = got
      .filter((g) => g.type === 'email.opened')
      .map((g) => g.data.machine)
      .sort();
    // The first open by a person and the first by a machine; the repeated open sends nothing.
    expect(opened).toEqual([false, true]);
  });
});
