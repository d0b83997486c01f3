import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom, type WebhookEndpointView } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { type BadEndpointsProcess, startBadEndpointsProcess } from './support/bad-webhook-process.js';
import { type CountingSink, startCountingSink } from './support/crash-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const RECIPIENTS = 5_000;
/** The sender's default cap on an answer's body. */
const CAP = 4 * 1024;

/**
 * Issue 30 (1): one bad webhook endpoint must not starve the healthy ones. A project with five endpoints
 * subscribed to `email.sent`: one healthy, one that hangs, one answering 200 after 9 s, one answering a
 * 300 MB body, one redirecting to a loopback address it may not reach; a 5,000-recipient broadcast through
 * the engine (SQLite file, SMTP to a real sink, the sender on its defaults). The healthy endpoint gets all
 * 5,000 events within 30 s of the last mail; no body is read past the cap; the hanging and redirecting
 * endpoints' attempts are recorded as failures with their reasons, and their circuits open.
 */
describe('webhook endpoints are isolated from each other', () => {
  let dir: string;
  let sink: CountingSink;
  let healthy: WebhookReceiver;
  let badProcess: BadEndpointsProcess;
  let mailroom: Mailroom | undefined;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-hooks-isolation-'));
    sink = await startCountingSink();
    healthy = await startWebhookReceiver();
    // In a process of their own: a real receiver is another machine, whose work is not the sender's.
    badProcess = await startBadEndpointsProcess();
  });

  afterEach(async () => {
    await mailroom?.close();
    mailroom = undefined;
    await badProcess.close();
    await healthy.close();
    await sink.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`a healthy endpoint gets every event of a ${RECIPIENTS}-recipient broadcast beside four bad ones`, {
    timeout: 240_000,
  }, async () => {
    const bad = badProcess.endpoints;
    // What the sender's sockets to the large body read in all, headers included, per connection (each
    // POST to it ends its connection): the bytes it took off the wire.
    const bigPort = Number(bad.big.host.split(':')[1]);
    const bigReads: number[] = [];
    const onConnected = (message: unknown) => {
      const { socket } = message as { socket: Socket };
      if (socket.remotePort === bigPort) socket.once('close', () => bigReads.push(socket.bytesRead));
    };
    subscribe('undici:client:connected', onConnected);
    onTestFinished(() => {
      unsubscribe('undici:client:connected', onConnected);
    });
    const engine = createMailroom({
      store: sqlStore({ url: join(dir, 'mailroom.db') }),
      transport: smtpTransport({ host: '127.0.0.1', port: sink.port }),
      // Every endpoint but the redirect's target.
      fetch: { allowHosts: [healthy, bad.hanging, bad.slow, bad.big, bad.redirect].map((e) => e.host) },
    });
    mailroom = engine;
    const { project, secret } = await engine.admin.createProject({ name: 'Acme' });
    await engine.admin.addSender(project.id, { address: 'news@acme.test' });
    const add = async (url: string) =>
      (await engine.webhooks.add(secret, { url, events: ['email.sent'] })).endpoint.id;
    const healthyAdded = await engine.webhooks.add(secret, { url: healthy.url, events: ['email.sent'] });
    healthy.secret = healthyAdded.secret;
    const ids = {
      hanging: await add(bad.hanging.url),
      slow: await add(bad.slow.url),
      big: await add(bad.big.url),
      redirect: await add(bad.redirect.url),
    };

    engine.worker.start();
    const addresses = Array.from({ length: RECIPIENTS }, (_, i) => `r${i}@example.test`);
    let ref: string | undefined;
    for (let i = 0; i < RECIPIENTS; i += 250) {
      const recipients = addresses.slice(i, i + 250).map((address) => ({ address }));
      ref = (
        await engine.broadcast(
          secret,
          ref
            ? { broadcastRef: ref, recipients }
            : { subject: 'Hi', sender: 'news@acme.test', message: '<p>Hello</p>', recipients },
        )
      ).ref;
    }
    await sink.waitFor(RECIPIENTS, 180_000);
    const lastMail = Math.max(...sink.arrivals.map((a) => a.at));
    const firstMail = Math.min(...sink.arrivals.map((a) => a.at));
    const got = () =>
      new Set(
        healthy.received
          .filter((r) => r.verified && r.status === 204)
          .map((r) => String((r.payload.data.delivery as { address: string }).address)),
      );
    await healthy.waitFor(() => got().size >= RECIPIENTS, 60_000);
    const healthyDone = performance.now();
    // The hanging endpoint's first failures come with its time cap (10 s), maybe after the healthy one
    // has everything: wait for both failing endpoints' circuits to open.
    let states = new Map<string, WebhookEndpointView>();
    for (const until = Date.now() + 60_000; Date.now() < until; ) {
      states = new Map((await engine.webhooks.list(secret)).map((e) => [e.id, e]));
      if ([ids.hanging, ids.redirect].every((id) => states.get(id)?.state === 'circuit_open')) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await engine.worker.stop();
    const after = await badProcess.stats();

    // The healthy endpoint: every event, within 30 s of the last mail.
    expect([...got()].sort()).toEqual([...addresses].sort());
    expect(healthyDone - lastMail, `mail took ${Math.round(lastMail - firstMail)} ms`).toBeLessThan(30_000);
    expect(states.get(healthyAdded.endpoint.id)?.state).toBe('healthy');

    // The hanging endpoint holds only its share of the sender's places, fails by timeout, and its
    // circuit opens: it gets a handful of requests, not one per event.
    const attempts = async (endpointId: string) =>
      engine.webhooks.attempts(secret, { endpointId, limit: 500 });
    const hanging = await attempts(ids.hanging);
    expect(hanging.length).toBeGreaterThan(0);
    expect(
      hanging.every((a) => a.statusCode === null && /took longer than 10000 ms/.test(a.error ?? '')),
    ).toBe(true);
    // Its share is the sender's 32 places over the endpoints with messages waiting (endpoint-lanes.ts):
    // 6 while all five wait, 16 beside the slow one, more only when no other endpoint waits. So never
    // more than the 32, and the healthy endpoint's events (above) never waited for its places.
    expect(after.hanging.maxOpen).toBeLessThanOrEqual(32);
    expect(after.hanging.requests).toBeLessThan(100);
    expectCircuitOpened(states.get(ids.hanging));

    // The redirect is a failure with its Location, never followed; its circuit opens too.
    const redirected = await attempts(ids.redirect);
    expect(redirected.length).toBeGreaterThan(0);
    for (const a of redirected) {
      expect(a.statusCode).toBe(302);
      expect(a.error).toBe(`HTTP 302 redirect to ${bad.forbidden.url}/inside?…, not followed`);
    }
    expect(after.forbidden.connections).toBe(0);
    expect(after.redirect.requests).toBeLessThan(100);
    expectCircuitOpened(states.get(ids.redirect));

    // The 300 MB body: a 200 is delivered, and no answer was read past the cap.
    const big = await attempts(ids.big);
    expect(big.length).toBeGreaterThan(0);
    expect(big.every((a) => a.statusCode === 200 && a.error === null)).toBe(true);
    expect(after.written.length).toBeGreaterThan(0);
    // What the sender read of each answer: up to the socket read that passed the cap (64 KiB at most
    // at a time), the status line and headers, and the chunks' framing.
    expect(bigReads.length).toBeGreaterThan(0);
    expect(Math.max(...bigReads), JSON.stringify(bigReads.slice(0, 50))).toBeLessThanOrEqual(
      CAP + 64 * 1024 + 2048,
    );
    // What the server wrote before the connection closed: what the sender read, and what was still on
    // the socket (more when the sender's process is slow to close). A reader without the cap would take
    // about 80 MB in the 10 s of the time cap.
    const written = [...after.written].sort((a, b) => a - b);
    const median = written[Math.floor(written.length / 2)] ?? 0;
    expect(median, JSON.stringify(written.slice(-20))).toBeLessThanOrEqual(CAP + 4 * 16 * 1024);
    expect(written.at(-1)).toBeLessThan(16 * 1024 * 1024);
    expect(states.get(ids.big)?.state).toBe('healthy');

    // The slow endpoint: 200s after about 9 s each, delivered; it is slow, not failing.
    const slow = await attempts(ids.slow);
    expect(slow.some((a) => a.statusCode === 200 && a.error === null && a.latencyMs >= 9_000)).toBe(true);
    expect(states.get(ids.slow)?.state).toBe('healthy');
  });
});

/** The endpoint's circuit is open (or its probe on its way), after a failing run. */
function expectCircuitOpened(endpoint: WebhookEndpointView | undefined): void {
  expect(endpoint?.state).toBe('circuit_open');
  expect(endpoint?.circuitOpenUntil).toBeInstanceOf(Date);
  expect(endpoint?.failingSince).toBeInstanceOf(Date);
}
