import type { AddressInfo } from 'node:net';
import { createMailroom, type Mailroom, type Store } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient } from './support/dashboard-session.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * The dashboard's Webhooks page over HTTP (Fastify on 127.0.0.1): endpoints and their state, recent
 * attempts with status code and latency, "send a test event" and "replay" of a failed message (CSRF and
 * project scope checked); a delivery's page lists its events.
 */

/** A browser-like client: keeps the session cookie, never follows redirects. */
describe('dashboard: webhooks', () => {
  let mailroom: Mailroom;
  let store: Store;
  let receiver: WebhookReceiver;
  let app: FastifyInstance;
  let client: DashboardClient;
  let secret: string;
  let otherSecret: string;
  let endpointId: string;
  let ref: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    receiver.respond = () => 503;
    store = memoryStore();
    mailroom = createMailroom({
      store,
      transport: memoryTransport(),
      fetch: { allowHosts: [receiver.host] },
      // No retry: a failure is final at once, so the page has failed messages to replay.
      webhooks: { retryScheduleMs: [] },
    });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    otherSecret = (await mailroom.admin.createProject({ name: 'Other' })).secret;
    await mailroom.admin.addSender(created.project.id, { address: 'news@acme.test' });
    const added = await mailroom.webhooks.add(secret, {
      url: `${receiver.url}?<b>x</b>`,
      events: ['email.sent'],
    });
    receiver.secret = added.secret;
    endpointId = added.endpoint.id;
    ({ ref } = await mailroom.broadcast(secret, {
      subject: 'Hi',
      sender: 'news@acme.test',
      message: 'Hello',
      recipients: ['a@example.test'],
    }));
    await mailroom.worker.drain();
    await mailroom.webhooks.drain();
    app = Fastify();
    await app.register(mailroomPlugin, { mailroom });
    await app.listen({ host: '127.0.0.1', port: 0 });
    client = new DashboardClient(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
    await client.post('/dashboard/sign-in', { secret });
  });

  afterAll(async () => {
    await app.close();
    await mailroom.close();
    await receiver.close();
  });

  it('shows endpoints, attempts with status and latency, and failed messages', async () => {
    const res = await client.get('/dashboard/webhooks');
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toContain('href="/dashboard/webhooks" aria-current="page"');
    // The URL as stored (normalized, so percent-encoded), never as markup.
    expect(body).toContain('/hook?%3Cb%3Ex%3C/b%3E');
    expect(body).not.toContain('<b>x</b>');
    expect(body).toContain('email.sent');
    expect(body).toMatch(/503/);
    expect(body).toMatch(/\d+ ms/);
    expect(body).toContain('Send a test event');
    expect(body).toContain('Replay');
  });

  it('sends a test event, and replays a failed message with its webhook-id', async () => {
    const token = await client.csrf('/dashboard/webhooks');
    receiver.respond = () => 200;
    expect((await client.post(`/dashboard/webhooks/${endpointId}/test`, {})).status).toBe(403);
    const test = await client.post(`/dashboard/webhooks/${endpointId}/test`, { _csrf: token });
    expect(test.status).toBe(303);
    expect(test.headers.get('location')).toBe('/dashboard/webhooks?done=test');
    await mailroom.webhooks.drain();
    expect(receiver.received.at(-1)).toMatchObject({
      verified: true,
      status: 200,
      payload: { data: { test: true } },
    });

    const [failed] = await mailroom.webhooks.messages(secret, { status: 'failed' });
    if (!failed) throw new Error('expected a failed message');
    const replay = await client.post(`/dashboard/webhooks/messages/${failed.id}/replay`, { _csrf: token });
    expect(replay.status).toBe(303);
    await mailroom.webhooks.drain();
    const copies = receiver.received.filter((r) => r.id === failed.id);
    expect(copies.map((r) => r.status)).toEqual([503, 200]);
    const page = await (await client.get('/dashboard/webhooks?done=replay')).text();
    expect(page).toContain('Message queued to be sent again.');
    expect(page).toContain('No failed messages.');
  });

  it("keeps other projects' endpoints and messages out of reach", async () => {
    const other = new DashboardClient(client.base);
    await other.post('/dashboard/sign-in', { secret: otherSecret });
    const token = await other.csrf('/dashboard/webhooks');
    const page = await (await other.get('/dashboard/webhooks')).text();
    expect(page).not.toContain(receiver.host);
    expect((await other.post(`/dashboard/webhooks/${endpointId}/test`, { _csrf: token })).status).toBe(404);
    const [message] = await mailroom.webhooks.messages(secret);
    expect(
      (await other.post(`/dashboard/webhooks/messages/${message?.id}/replay`, { _csrf: token })).status,
    ).toBe(404);
  });

  it('says when an endpoint is disabled, and why', async () => {
    await mailroom.webhooks.setEnabled(secret, endpointId, false);
    const page = await (await client.get('/dashboard/webhooks')).text();
    expect(page).toContain(
      '<span class="badge disabled">disabled</span> <span class="muted">disabled by the user',
    );
    await mailroom.webhooks.setEnabled(secret, endpointId, true);
  });

  it('says when an endpoint is healthy, and until when its circuit is open', async () => {
    expect(await (await client.get('/dashboard/webhooks')).text()).toContain(
      '<span class="badge healthy">healthy</span>',
    );
    const until = new Date(Date.now() + 60_000);
    await store.setWebhookCircuit(endpointId, until);
    const page = await (await client.get('/dashboard/webhooks')).text();
    expect(page).toContain(
      `<span class="badge circuit_open">circuit_open</span> <span class="muted">until</span> <time datetime="${until.toISOString()}">`,
    );
    expect((await mailroom.webhooks.list(secret))[0]).toMatchObject({
      state: 'circuit_open',
      circuitOpenUntil: until,
    });
    await store.setWebhookCircuit(endpointId, new Date(Date.now() - 1_000));
    expect(await (await client.get('/dashboard/webhooks')).text()).toContain('probing since');
    await store.setWebhookCircuit(endpointId, null);
    expect((await mailroom.webhooks.list(secret))[0]?.state).toBe('healthy');
  });

  it('disables and enables an endpoint with its button (CSRF-checked, own project only)', async () => {
    const token = await client.csrf('/dashboard/webhooks');
    expect((await client.post(`/dashboard/webhooks/${endpointId}/disable`, {})).status).toBe(403);
    const off = await client.post(`/dashboard/webhooks/${endpointId}/disable`, { _csrf: token });
    expect(off.status).toBe(303);
    expect(off.headers.get('location')).toBe('/dashboard/webhooks?done=disable');
    expect((await mailroom.webhooks.list(secret))[0]?.enabled).toBe(false);
    const page = await (await client.get('/dashboard/webhooks?done=disable')).text();
    expect(page).toContain('Endpoint disabled: new events are not sent to it.');
    expect(page).toContain(`action="/dashboard/webhooks/${endpointId}/enable"`);
    const other = new DashboardClient(client.base);
    await other.post('/dashboard/sign-in', { secret: otherSecret });
    const otherToken = await other.csrf('/dashboard/webhooks');
    expect((await other.post(`/dashboard/webhooks/${endpointId}/enable`, { _csrf: otherToken })).status).toBe(
      404,
    );
    const on = await client.post(`/dashboard/webhooks/${endpointId}/enable`, { _csrf: token });
    expect(on.headers.get('location')).toBe('/dashboard/webhooks?done=enable');
    expect((await mailroom.webhooks.list(secret))[0]).toMatchObject({ enabled: true, disabledReason: null });
    expect(await (await client.get('/dashboard/webhooks')).text()).toContain(
      `action="/dashboard/webhooks/${endpointId}/disable"`,
    );
  });

  it("lists a delivery's events on its page", async () => {
    const page = await (
      await client.get(`/dashboard/broadcasts/${ref}/delivery?address=a%40example.test`)
    ).text();
    expect(page).toContain('<h2>Events</h2>');
    expect(page).toContain('<code>email.sent</code>');
  });
});
