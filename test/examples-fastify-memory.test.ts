import { afterEach, describe, expect, it, vi } from 'vitest';
import { type FastifyMemoryApp, start } from '../examples/fastify-memory/app.js';

describe('example: fastify-memory', () => {
  let app: FastifyMemoryApp | undefined;

  afterEach(async () => {
    await app?.stop();
    app = undefined;
  });

  it('accepts a message over HTTP under /api and the in-process worker delivers it to memory', async () => {
    app = await start({ port: 0 });
    expect(app.url).not.toMatch(/:0$/);
    const res = await fetch(`${app.url}/api/send/mail`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        subject: 'Hi {{ recipient.firstName }}',
        sender: 'hello@fastify.example',
        template: { ref: 'welcome', variables: { plan: 'Pro' } },
        recipients: [{ address: 'ada@example.test', name: 'Ada Lovelace' }],
      }),
    });
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as { data: { ref: string } };
    expect(data.ref).toMatch(/^msg_/);

    const transport = app.transport;
    await vi.waitFor(() => expect(transport.lastMessageTo('ada@example.test')).toBeDefined(), {
      timeout: 10_000,
    });
    const message = transport.lastMessageTo('ada@example.test');
    expect(message?.subject).toBe('Hi Ada');
    expect(message?.html).toContain('Hello Ada, your plan is Pro.');
    expect(message?.from).toEqual({ address: 'hello@fastify.example', name: 'Fastify Demo' });

    // The app's own route is untouched by the plugin; unauthenticated calls are refused.
    expect(await (await fetch(app.url)).json()).toMatchObject({ api: '/api/send/mail' });
    const denied = await fetch(`${app.url}/api/send/mail`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(denied.status).toBe(401);
  });
});
