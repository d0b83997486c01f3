import { createMailroom, type Mailroom } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callApi, listenMailroom } from './support/http-harness.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/** `GET /events`, `GET/POST /webhooks`, `PATCH/DELETE /webhooks/:id` over both binders, and the OpenAPI schema. */
describe.each(['express', 'fastify'] as const)('events and webhooks over HTTP (%s)', (binder) => {
  let mailroom: Mailroom;
  let receiver: WebhookReceiver;
  let close: () => Promise<void>;
  let base: string;
  let secret: string;
  let otherSecret: string;

  beforeEach(async () => {
    receiver = await startWebhookReceiver();
    mailroom = createMailroom({
      store: memoryStore(),
      transport: memoryTransport(),
      fetch: { allowHosts: [receiver.host] },
    });
    for (const name of ['Acme', 'Other']) {
      const created = await mailroom.admin.createProject({ name });
      await mailroom.admin.addSender(created.project.id, { address: 'news@acme.test' });
      if (name === 'Acme') secret = created.secret;
      else otherSecret = created.secret;
    }
    ({ url: base, close } = await listenMailroom(binder, mailroom));
  });

  afterEach(async () => {
    await close();
    await mailroom.close();
    await receiver.close();
  });

  const call = (method: string, path: string, body?: unknown, auth: string | null = secret) =>
    callApi(base, method, path, body, auth);

  it('adds, lists and removes endpoints; the secret is in the add answer only', async () => {
    expect((await call('GET', '/webhooks', undefined, null)).status).toBe(401);
    const added = await call('POST', '/webhooks', { url: receiver.url, events: ['email.sent'] });
    expect(added.status).toBe(200);
    const data = added.json.data as { webhook: { id: string; url: string }; secret: string };
    expect(data.secret).toMatch(/^whsec_/);
    expect(data.webhook).toMatchObject({ url: receiver.url, events: ['email.sent'], enabled: true });
    const listed = await call('GET', '/webhooks');
    expect((listed.json.data as { webhooks: unknown[] }).webhooks).toHaveLength(1);
    expect(JSON.stringify(listed.json)).not.toContain(data.secret);
    expect((await call('GET', '/webhooks', undefined, otherSecret)).json.data).toEqual({ webhooks: [] });
    expect((await call('DELETE', `/webhooks/${data.webhook.id}`, undefined, otherSecret)).status).toBe(404);
    const rotated = await call('POST', `/webhooks/${data.webhook.id}/rotate-secret`);
    expect((rotated.json.data as { secret: string }).secret).toMatch(/^whsec_/);
    expect((await call('DELETE', `/webhooks/${data.webhook.id}`)).status).toBe(200);
    expect((await call('GET', '/webhooks')).json.data).toEqual({ webhooks: [] });
  });

  it('disables and enables an endpoint with PATCH; while disabled it gets no new events', async () => {
    const added = await call('POST', '/webhooks', { url: receiver.url, events: ['email.sent'] });
    const id = (added.json.data as { webhook: { id: string } }).webhook.id;
    const off = await call('PATCH', `/webhooks/${id}`, { enabled: false });
    expect(off.status).toBe(200);
    expect(off.json.data).toMatchObject({
      webhook: { id, enabled: false, disabledReason: 'disabled by the user' },
    });
    // While disabled, a new event is not queued for it.
    await mailroom.send(secret, {
      subject: 'Hi',
      sender: 'news@acme.test',
      message: '<p>Hi</p>',
      recipients: [{ address: 'a@example.test' }],
    });
    await mailroom.worker.drain();
    expect(await mailroom.webhooks.messages(secret)).toEqual([]);
    const on = await call('PATCH', `/webhooks/${id}`, { enabled: true });
    expect(on.json.data).toMatchObject({
      webhook: { id, enabled: true, disabledReason: null, failingSince: null },
    });
    expect((await call('GET', '/webhooks')).json.data).toMatchObject({ webhooks: [{ id, enabled: true }] });
    // Bad bodies and other projects' endpoints.
    for (const body of [{}, { enabled: 'yes' }, []]) {
      const res = await call('PATCH', `/webhooks/${id}`, body);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ code: 'VALIDATION_FAILED' });
    }
    expect((await call('PATCH', `/webhooks/${id}`, { enabled: false }, otherSecret)).status).toBe(404);
    expect((await call('PUT', `/webhooks/${id}`, { enabled: false })).status).toBe(405);
  });

  it('refuses bad endpoints: private and metadata addresses, unknown types, no url', async () => {
    for (const url of ['http://192.168.1.10/hook', 'http://169.254.169.254/', 'http://localhost:9/hook']) {
      const res = await call('POST', '/webhooks', { url });
      expect(res.status).toBe(422);
      expect(res.json).toMatchObject({ code: 'FETCH_REFUSED' });
    }
    expect((await call('POST', '/webhooks', { url: receiver.url, events: ['email.nope'] })).status).toBe(400);
    expect((await call('POST', '/webhooks', {})).status).toBe(400);
  });

  it('lists events in pages and by filter', async () => {
    const { secret: whsec } = await mailroom.webhooks.add(secret, { url: receiver.url });
    receiver.secret = whsec;
    const sent = await call('POST', '/send/mail/broadcast', {
      subject: 'Hi',
      sender: 'news@acme.test',
      message: 'Hello',
      recipients: ['a@example.test', 'b@example.test', 'c@example.test'],
    });
    const ref = (sent.json.data as { broadcastRef: string }).broadcastRef;
    await mailroom.worker.drain();
    const page1 = await call('GET', '/events?limit=2&types=email.sent');
    const first = page1.json.data as { events: Array<{ id: string; type: string }>; next: string };
    expect(first.events.map((e) => e.type)).toEqual(['email.sent', 'email.sent']);
    const page2 = await call('GET', `/events?limit=2&types=email.sent&after=${first.next}`);
    const second = page2.json.data as {
      events: Array<{ id: string; data: { mailing: { ref: string } } }>;
      next: null;
    };
    expect(second.events).toHaveLength(1);
    expect(second.next).toBeNull();
    expect(second.events[0]?.data.mailing.ref).toBe(ref);
    const byAddress = await call(
      'GET',
      `/events?address=${encodeURIComponent('b@example.test')}&mailingRef=${ref}`,
    );
    expect((byAddress.json.data as { events: unknown[] }).events).toHaveLength(1);
    const completed = await call('GET', '/events?types=broadcast.completed');
    expect((completed.json.data as { events: unknown[] }).events).toHaveLength(1);
    expect((await call('GET', '/events?limit=0')).status).toBe(400);
    expect(
      ((await call('GET', '/events', undefined, otherSecret)).json.data as { events: unknown[] }).events,
    ).toEqual([]);
    await mailroom.webhooks.drain();
    expect(receiver.received.filter((r) => r.verified)).toHaveLength(4);
  });

  it('documents the event payload as a JSON Schema in the OpenAPI document', async () => {
    const res = await fetch(`${base}/openapi.json`);
    const doc = (await res.json()) as {
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, { properties?: Record<string, { enum?: string[] }> }> };
    };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/events', '/webhooks', '/webhooks/{id}', '/webhooks/{id}/rotate-secret']),
    );
    expect(doc.paths['/webhooks']).toHaveProperty('post');
    expect(doc.components.schemas.Event?.properties?.type?.enum).toContain('email.delivery_delayed');
    const data = doc.components.schemas.Event?.properties?.data as {
      properties: { bounce: { required: string[]; properties: Record<string, { enum?: string[] }> } };
    };
    const bounce = data.properties.bounce;
    expect(bounce.properties.class?.enum).toEqual(['recipient-hard', 'soft', 'sender-side']);
    expect(bounce.properties.reason?.enum).toEqual(expect.arrayContaining(['userunknown', 'authfailure']));
    expect(bounce.properties.reason?.enum).not.toContain('vacation');
    expect(bounce.required).toEqual(['reason', 'class', 'status', 'diagnostic', 'source']);
  });
});
