import type { AddressInfo } from 'node:net';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient } from './support/dashboard-session.js';

/**
 * The dashboard's Keys page over HTTP (Fastify on 127.0.0.1): the project's keys without secrets, and
 * "Revoke" behind the session's CSRF token, for a `full` session only, within the project.
 */

/** A browser-like client: keeps the session cookie, never follows redirects. */
describe('dashboard: keys', () => {
  let mailroom: Mailroom;
  let app: FastifyInstance;
  let base: string;
  let secret: string;
  let readSecret: string;
  let sendingId: string;
  let sendingSecret: string;
  let otherKeyId: string;

  beforeAll(async () => {
    mailroom = createMailroom({ store: memoryStore(), transport: memoryTransport() });
    const acme = await mailroom.admin.createProject({ name: 'Acme' });
    const other = await mailroom.admin.createProject({ name: 'Other' });
    secret = acme.secret;
    const auth = await mailroom.authenticate(secret);
    const sending = await mailroom.keys.create(auth, { scope: 'sending', domains: ['example.com'] });
    sendingId = sending.key.id;
    sendingSecret = sending.secret;
    readSecret = (await mailroom.keys.create(auth, { scope: 'read' })).secret;
    otherKeyId = (await mailroom.keys.list(await mailroom.authenticate(other.secret)))[0]?.id ?? '';
    app = Fastify();
    await app.register(mailroomPlugin, { prefix: '/v1', mailroom });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`;
  });

  afterAll(async () => {
    await app.close();
    await mailroom.close();
  });

  async function signedIn(key: string): Promise<DashboardClient> {
    const client = new DashboardClient(base);
    const res = await client.post('/dashboard/sign-in', { secret: key });
    expect(res.status).toBe(303);
    return client;
  }

  it('lists the keys (prefix, scope, senders, state), never a secret', async () => {
    const client = await signedIn(secret);
    const res = await client.get('/dashboard/keys');
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('>Keys<');
    expect(page).toContain(sendingId);
    expect(page).toContain(`${sendingSecret.slice(0, 12)}…`);
    expect(page).toContain('example.com');
    expect(page).not.toContain(sendingSecret);
    expect(page).not.toContain(secret);
    expect(page).not.toContain(otherKeyId);
  });

  it('refuses a sending key at sign-in: the dashboard needs a read or full key', async () => {
    const client = new DashboardClient(base);
    const res = await client.post('/dashboard/sign-in', { secret: sendingSecret });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('A sending key cannot sign in');
    expect(client.cookie).toBeUndefined();
  });

  it('a read session may not use any form that changes something', async () => {
    const reader = await signedIn(readSecret);
    const token = await reader.csrf('/dashboard/keys');
    const res = await reader.post('/dashboard/webhooks/wh_x/disable', { _csrf: token });
    expect(res.status).toBe(403);
  });

  it('ends the session of a key once it is revoked', async () => {
    const auth = await mailroom.authenticate(secret);
    const extra = await mailroom.keys.create(auth, { scope: 'full' });
    const client = await signedIn(extra.secret);
    expect((await client.get('/dashboard/keys')).status).toBe(200);
    await mailroom.keys.revoke(auth, extra.key.id);
    const after = await client.get('/dashboard/keys');
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toContain('/dashboard/sign-in');
  });

  it('revokes a key with the session token; without it, or from a read session, nothing changes', async () => {
    const client = await signedIn(secret);
    const noToken = await client.post(`/dashboard/keys/${sendingId}/revoke`, {});
    expect(noToken.status).toBe(403);
    const reader = await signedIn(readSecret);
    const readerToken = await reader.csrf('/dashboard/keys');
    const refused = await reader.post(`/dashboard/keys/${sendingId}/revoke`, { _csrf: readerToken });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('full');
    expect((await mailroom.authenticate(sendingSecret)).key?.id).toBe(sendingId);

    const token = await client.csrf('/dashboard/keys');
    const foreign = await client.post(`/dashboard/keys/${otherKeyId}/revoke`, { _csrf: token });
    expect(foreign.status).toBe(404);
    const revoked = await client.post(`/dashboard/keys/${sendingId}/revoke`, { _csrf: token });
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get('location')).toContain('/dashboard/keys?done=revoke');
    await expect(mailroom.authenticate(sendingSecret)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    const page = await (await client.get('/dashboard/keys?done=revoke')).text();
    expect(page).toContain('Key revoked');
    expect(page).toContain('badge revoked');
  });
});
