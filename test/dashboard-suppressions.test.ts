import type { AddressInfo } from 'node:net';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { mailroomRouter } from '@mailroom/http/express';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import express from 'express';
import Fastify from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DashboardClient } from './support/dashboard-session.js';

/**
 * The dashboard's Suppressions page over HTTP (Express and Fastify on 127.0.0.1): the list with reason and
 * date, the search, and the "Lift" button, which posts with the session's CSRF token from this origin
 * only, and lifts only the signed-in project's suppressions.
 */

/** A browser-like client: keeps the session cookie, never follows redirects. */
const BINDERS = [
  {
    name: 'fastify',
    async start(mailroom: Mailroom) {
      const app = Fastify();
      await app.register(mailroomPlugin, { mailroom });
      await app.listen({ host: '127.0.0.1', port: 0 });
      return {
        url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
        close: () => app.close(),
      };
    },
  },
  {
    name: 'express',
    async start(mailroom: Mailroom) {
      const app = express();
      app.use(mailroomRouter(mailroom));
      const server = await new Promise<ReturnType<typeof app.listen>>((resolve, reject) => {
        const s = app.listen(0, '127.0.0.1', (error?: Error) => (error ? reject(error) : resolve(s)));
      });
      return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        close: () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      };
    },
  },
];

describe.each(BINDERS)('dashboard: suppressions ($name)', (binder) => {
  let mailroom: Mailroom;
  let client: DashboardClient;
  let close: () => Promise<void>;
  let secret: string;
  let otherSecret: string;

  beforeEach(async () => {
    mailroom = createMailroom({ store: memoryStore(), transport: memoryTransport() });
    const acme = await mailroom.admin.createProject({ name: 'Acme' });
    secret = acme.secret;
    otherSecret = (await mailroom.admin.createProject({ name: 'Other' })).secret;
    await mailroom.suppressions.add(secret, {
      address: 'ann@example.com',
      reason: 'complaint',
      detail: '<b>fbl</b>',
    });
    await mailroom.suppressions.add(secret, { address: 'bob@example.com' });
    await mailroom.suppressions.add(otherSecret, { address: 'ann@example.com' });
    const started = await binder.start(mailroom);
    close = started.close;
    client = new DashboardClient(started.url);
    await client.post('/dashboard/sign-in', { secret });
  });
  afterEach(async () => {
    await close();
    await mailroom.close();
  });

  it('lists suppressions with reason and date, and searches them', async () => {
    const page = await (await client.get('/dashboard/suppressions')).text();
    expect(page).toContain('href="/dashboard/suppressions" aria-current="page"');
    expect(page).toContain('ann@example.com');
    expect(page).toContain('complaint');
    expect(page).toContain('&lt;b&gt;fbl&lt;/b&gt;');
    expect(page).not.toContain('<b>fbl</b>');
    expect(page).toMatch(/<time datetime="[^"]+"/);
    expect(page.match(/>Lift</g)).toHaveLength(2);
    const found = await (await client.get('/dashboard/suppressions?q=bob')).text();
    expect(found).toContain('bob@example.com');
    expect(found).not.toContain('ann@example.com');
    expect(await (await client.get('/dashboard/suppressions?q=carol')).text()).toContain(
      'No suppressed address matches.',
    );
  });

  it('lifts a suppression with the button: CSRF token and origin checked, own project only', async () => {
    const token = await client.csrf('/dashboard/suppressions');
    // Without the token, or from another site: refused, nothing lifted.
    expect((await client.post('/dashboard/suppressions/lift', { address: 'ann@example.com' })).status).toBe(
      403,
    );
    const crossSite = await client.post(
      '/dashboard/suppressions/lift',
      { address: 'ann@example.com', _csrf: token },
      { origin: 'https://evil.example' },
    );
    expect(crossSite.status).toBe(403);
    expect((await mailroom.suppressions.list(secret)).items).toHaveLength(2);

    const lifted = await client.post('/dashboard/suppressions/lift', {
      address: 'ann@example.com',
      _csrf: token,
    });
    expect(lifted.status).toBe(303);
    expect(lifted.headers.get('location')).toBe('/dashboard/suppressions?lifted=ann%40example.com');
    expect((await mailroom.suppressions.list(secret)).items.map((s) => s.address)).toEqual([
      'bob@example.com',
    ]);
    // The other project's suppression of the same address stays.
    expect((await mailroom.suppressions.list(otherSecret)).items.map((s) => s.address)).toEqual([
      'ann@example.com',
    ]);
    const page = await (await client.get('/dashboard/suppressions?lifted=ann%40example.com')).text();
    expect(page).toContain('Lifted: ann@example.com may be mailed again.');
    // Lifting it again: not suppressed any more.
    expect(
      (await client.post('/dashboard/suppressions/lift', { address: 'ann@example.com', _csrf: token }))
        .status,
    ).toBe(404);

    // Another project's session cannot lift this project's suppression.
    const other = new DashboardClient(client.base);
    await other.post('/dashboard/sign-in', { secret: otherSecret });
    const otherToken = await other.csrf('/dashboard/suppressions');
    expect(
      (await other.post('/dashboard/suppressions/lift', { address: 'bob@example.com', _csrf: otherToken }))
        .status,
    ).toBe(404);
    expect((await mailroom.suppressions.list(secret)).items.map((s) => s.address)).toEqual([
      'bob@example.com',
    ]);
  });
});
