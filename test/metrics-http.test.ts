import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { Mailroom } from '@mailroom/core';
import { createMailroom, MailroomError } from '@mailroom/core';
import type { HttpOptions } from '@mailroom/http';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * `GET /metrics` on a real Fastify server in front of a real engine: off by default, behind its bearer
 * token when one is set, and counting what happened: requests by route and status, delivery outcomes,
 * relay replies by class, send latency, queue depth, source rows, completed mailings. Each handler has a
 * registry of its own; prom-client's global one is left alone.
 */

const SENDER = 'news@acme.test';
const TOKEN = 'scrape-token-0123456789';
const HARD = 'hard@example.test';
const SOFT = 'soft@example.test';

/** The value of one sample of the exposition text, its labels matched exactly. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const got = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    const wanted = Object.entries(labels);
    if (wanted.length === Object.keys(got).length && wanted.every(([k, v]) => got[k] === v))
      return Number(match[3]);
  }
  return undefined;
}

async function start(
  mailroom: Mailroom,
  options: HttpOptions,
): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify();
  await app.register(mailroomPlugin, { mailroom, ...options });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

describe('GET /metrics', () => {
  let mailroom: Mailroom;
  let secret: string;
  let server: { app: FastifyInstance; url: string };
  let open: { app: FastifyInstance; url: string };
  let off: { app: FastifyInstance; url: string };

  const post = (path: string, body: unknown, key = secret) =>
    fetch(server.url + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  /** A scrape with `token` as bearer, `null` for none. */
  const scrape = async (url = server.url, token: string | null = TOKEN) => {
    const res = await fetch(`${url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    return { res, text: await res.text() };
  };

  /** Runs the worker until the broadcast completes (retries come due a few milliseconds later). */
  async function settle(ref: string): Promise<void> {
    for (let i = 0; i < 500; i++) {
      await mailroom.worker.drain();
      if ((await mailroom.getMailing(secret, ref)).status === 'completed') return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    throw new Error(`${ref} did not complete`);
  }

  beforeAll(async () => {
    const transport = memoryTransport({
      failWith: (m) => {
        if (m.to.address === HARD) {
          return new MailroomError('TRANSPORT_PERMANENT', '550 5.1.1 no such user', {
            response: '550 5.1.1 no such user',
            responseCode: 550,
            command: 'RCPT TO',
          });
        }
        if (m.to.address === SOFT) {
          return new MailroomError('TRANSPORT_TRANSIENT', '451 4.3.0 try later', {
            response: '451 4.3.0 try later',
            responseCode: 451,
          });
        }
        return undefined;
      },
    });
    mailroom = createMailroom({
      store: memoryStore(),
      transport,
      worker: { maxAttempts: 2, retryBaseMs: 1, retryMaxMs: 2 },
    });
    const project = await mailroom.admin.createProject({ name: 'Acme' });
    secret = project.secret;
    await mailroom.admin.addSender(project.project.id, { address: SENDER });
    await mailroom.admin.createAudienceGroup(project.project.id, { ref: 'vip' });
    server = await start(mailroom, { metrics: { token: TOKEN } });
    open = await start(mailroom, { metrics: { processMetrics: false } });
    off = await start(mailroom, {});
  });

  afterAll(async () => {
    await server.app.close();
    await open.app.close();
    await off.app.close();
    await mailroom.close();
  });

  it('does not exist unless configured', async () => {
    const res = await fetch(`${off.url}/metrics`);
    expect(res.status).toBe(404);
  });

  it('requires the bearer token when one is set', async () => {
    for (const token of [null, 'wrong-token', `${TOKEN}x`, TOKEN.slice(1)]) {
      const { res, text } = await scrape(server.url, token);
      expect(res.status, String(token)).toBe(401);
      expect(text).not.toContain('mailroom_');
    }
    const basic = await fetch(`${server.url}/metrics`, { headers: { authorization: `Basic ${TOKEN}` } });
    expect(basic.status).toBe(401);
    const { res, text } = await scrape();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(text).toContain('# TYPE mailroom_http_requests_total counter');
    expect(text).toContain('process_cpu_user_seconds_total');
    expect((await fetch(`${server.url}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it('counts requests, outcomes, replies, latency, sources, completions and the queue', async () => {
    const inline = [...['a', 'b', 'c', 'd', 'e'].map((x) => `${x}@example.test`), HARD, SOFT];
    const first = await post('/send/mail/broadcast', {
      subject: 'First',
      sender: SENDER,
      message: 'Hello',
      recipients: inline,
      options: { acquiringAudience: 'vip' },
    });
    expect(first.status).toBe(200);
    const firstRef = ((await first.json()) as { data: { broadcastRef: string } }).data.broadcastRef;
    await settle(firstRef);

    // The audience group now has the 7 addresses; HARD is suppressed since its 5.1.1, so the source leaves
    // it out, and given inline it is refused at send time.
    const second = await post('/send/mail/broadcast', {
      subject: 'Second',
      sender: SENDER,
      message: 'Hello again',
      recipients: [HARD],
      sources: [{ ref: 'vip' }],
    });
    expect(second.status).toBe(200);
    await settle(((await second.json()) as { data: { broadcastRef: string } }).data.broadcastRef);

    // Waiting work: 3 scheduled an hour from now, and a message nobody delivered yet.
    expect(
      (
        await post('/send/mail/broadcast', {
          subject: 'Later',
          sender: SENDER,
          message: 'Soon',
          recipients: ['l1@example.test', 'l2@example.test', 'l3@example.test'],
          options: { scheduleFor: new Date(Date.now() + 3_600_000).toISOString() },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await post('/send/mail', {
          subject: 'Now',
          sender: SENDER,
          message: 'Hi',
          recipients: ['m1@example.test', 'm2@example.test'],
        })
      ).status,
    ).toBe(200);
    expect((await post('/send/mail', {}, 'sk_live_wrong')).status).toBe(401);
    expect((await fetch(`${server.url}/nowhere`)).status).toBe(404);
    expect((await fetch(`${server.url}/dashboard/sign-in`)).status).toBe(200);

    const { text } = await scrape();
    const requests = (route: string, method: string, status: string) =>
      sample(text, 'mailroom_http_requests_total', { route, method, status });
    expect(requests('broadcast', 'POST', '200')).toBe(3);
    expect(requests('send', 'POST', '200')).toBe(1);
    expect(requests('send', 'POST', '401')).toBe(1);
    expect(requests('unmatched', 'GET', '404')).toBe(1);
    expect(requests('dashboard', 'GET', '200')).toBe(1);
    expect(requests('metrics', 'GET', '401')).toBe(5);
    expect(sample(text, 'mailroom_http_request_duration_seconds_count', { route: 'broadcast' })).toBe(3);

    // First: 5 sent, HARD bounced (550 5.1.1), SOFT retried once then failed (451 twice).
    // Second: 5 sent, HARD suppressed (never sent), SOFT retried once then failed.
    const outcome = (o: string) =>
      sample(text, 'mailroom_deliveries_total', { kind: 'broadcast', outcome: o });
    expect(outcome('sent')).toBe(10);
    expect(outcome('failed')).toBe(2);
    expect(outcome('bounced')).toBe(1);
    expect(outcome('retry')).toBe(2);
    expect(outcome('suppressed')).toBe(1);
    expect(sample(text, 'mailroom_smtp_replies_total', { class: '2xx' })).toBe(10);
    expect(sample(text, 'mailroom_smtp_replies_total', { class: '4xx' })).toBe(4);
    expect(sample(text, 'mailroom_smtp_replies_total', { class: '5xx' })).toBe(1);
    expect(sample(text, 'mailroom_send_duration_seconds_count')).toBe(15);
    expect(sample(text, 'mailroom_send_duration_seconds_bucket', { le: '+Inf' })).toBe(15);
    expect(sample(text, 'mailroom_source_rows_total', { kind: 'audience', result: 'ok' })).toBe(7);
    expect(sample(text, 'mailroom_mailings_completed_total', { kind: 'broadcast' })).toBe(2);
    expect(sample(text, 'mailroom_queue_deliveries', { state: 'scheduled' })).toBe(3);
    expect(sample(text, 'mailroom_queue_deliveries', { state: 'due' })).toBe(2);
    expect(sample(text, 'mailroom_queue_deliveries', { state: 'sending' })).toBe(0);
    expect(sample(text, 'mailroom_queue_oldest_due_age_seconds')).toBeGreaterThanOrEqual(0);

    await mailroom.worker.drain();
    const after = (await scrape()).text;
    expect(sample(after, 'mailroom_queue_deliveries', { state: 'due' })).toBe(0);
    expect(sample(after, 'mailroom_deliveries_total', { kind: 'message', outcome: 'sent' })).toBe(2);
    expect(sample(after, 'mailroom_queue_oldest_due_age_seconds')).toBe(0);
  });

  it('keeps a registry per handler, apart from prom-client’s global one', async () => {
    // The open endpoint saw none of the requests above, and was asked to leave process metrics out.
    const { res, text } = await scrape(open.url, null);
    expect(res.status).toBe(200);
    expect(
      sample(text, 'mailroom_http_requests_total', { route: 'broadcast', method: 'POST', status: '200' }),
    ).toBe(undefined);
    expect(text).not.toContain('process_cpu');
    // Its event counters follow the same engine.
    expect(sample(text, 'mailroom_deliveries_total', { kind: 'broadcast', outcome: 'sent' })).toBe(10);
    const promClient = createRequire(new URL('../packages/http/package.json', import.meta.url))(
      'prom-client',
    ) as {
      register: { metrics(): Promise<string> };
    };
    expect(await promClient.register.metrics()).not.toContain('mailroom_');
  });
});
