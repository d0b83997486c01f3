import type { AddressInfo } from 'node:net';
import type { Mailroom } from '@mailroom/core';
import { createMailroom, MailroomError } from '@mailroom/core';
import type { HttpOptions } from '@mailroom/http';
import { mailroomRouter } from '@mailroom/http/express';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient } from './support/dashboard-session.js';

/**
 * The dashboard over plain HTTP, on a real Fastify server on 127.0.0.1 (and an Express one mounted under
 * /api) in front of a real engine: sign-in and its cookie, sign-out, CSRF and cross-site refusals, the
 * security headers, escaping of hostile values, project isolation, and each page's content.
 */

const SENDER = 'news@acme.test';
const HOSTILE_SUBJECT = '<img src=x onerror=alert(1)>Deal';
const HOSTILE_NAME = '<script>alert(2)</script>';
const HOSTILE_ADDRESS = "o'neil&co@evil.test";
const BOUNCE = 'bounce@evil.test';
const HOSTILE_REPLY = '550 5.1.1 <script>alert(3)</script> no such user';

interface World {
  mailroom: Mailroom;
  secret: string;
  foreignSecret: string;
  /** A completed broadcast with hostile values and 120 recipients, content kept. */
  ref: string;
  /** A single message of project A. */
  messageRef: string;
  /** A broadcast of project B. */
  foreignRef: string;
}

async function createWorld(): Promise<World> {
  const transport = memoryTransport({
    failWith: (m) =>
      m.to.address === BOUNCE
        ? new MailroomError('TRANSPORT_PERMANENT', HOSTILE_REPLY, {
            response: HOSTILE_REPLY,
            responseCode: 550,
            command: 'RCPT TO',
          })
        : undefined,
  });
  const mailroom = createMailroom({ store: memoryStore(), transport });
  const { project, secret } = await mailroom.admin.createProject({ name: 'Acme <b>Corp</b>' });
  await mailroom.admin.addSender(project.id, { address: SENDER, name: 'Acme' });
  await mailroom.admin.createTemplate(project.id, {
    ref: 'welcome',
    format: 'html',
    source: '<p>Hello {{ recipient.firstName }}, {{ offer }}</p><script>alert(4)</script>',
    subject: 'Welcome {{ recipient.firstName }}',
  });
  await mailroom.admin.createAudienceGroup(project.id, { ref: 'vip', name: '<i>VIP</i>' });
  const recipients = [
    { address: HOSTILE_ADDRESS, name: HOSTILE_NAME },
    { address: BOUNCE },
    ...Array.from({ length: 118 }, (_, i) => ({
      address: `member${String(i).padStart(3, '0')}@example.test`,
    })),
  ];
  const broadcast = await mailroom.broadcast(secret, {
    subject: HOSTILE_SUBJECT,
    sender: SENDER,
    message: '<p>Hi {{ recipient.name }}</p>',
    recipients,
    options: { storeContent: true, acquiringAudience: 'vip' },
  });
  const message = await mailroom.send(secret, {
    subject: 'Receipt 42',
    sender: SENDER,
    message: 'Thanks',
    recipients: ['buyer@example.test'],
  });

  const foreign = await mailroom.admin.createProject({ name: 'Other' });
  await mailroom.admin.addSender(foreign.project.id, { address: 'hi@other.test' });
  const foreignBroadcast = await mailroom.broadcast(foreign.secret, {
    subject: 'Secret plans of Other',
    sender: 'hi@other.test',
    message: 'Hello',
    recipients: ['x@other.test'],
    options: { storeContent: true },
  });
  await mailroom.worker.drain();
  return {
    mailroom,
    secret,
    foreignSecret: foreign.secret,
    ref: broadcast.ref,
    messageRef: message.ref,
    foreignRef: foreignBroadcast.ref,
  };
}

/** A browser-like client: keeps the session cookie, never follows redirects. */
async function startFastify(mailroom: Mailroom, options: HttpOptions = {}): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(mailroomPlugin, { mailroom, ...options });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return app;
}

const urlOf = (app: FastifyInstance) => `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

describe('dashboard over HTTP', () => {
  let world: World;
  let app: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    world = await createWorld();
    app = await startFastify(world.mailroom);
    base = urlOf(app);
  });

  afterAll(async () => {
    await app.close();
    await world.mailroom.close();
  });

  it('sends a visitor without a session to the sign-in page, and scripts get a 401', async () => {
    const client = new DashboardClient(base);
    const root = await client.get('/dashboard');
    expect(root.status).toBe(303);
    expect(root.headers.get('location')).toBe('/dashboard/sign-in');
    const page = await client.get('/dashboard/broadcasts');
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/dashboard/sign-in');
    const progress = await client.get(`/dashboard/broadcasts/${world.ref}/progress.json`);
    expect(progress.status).toBe(401);
    expect(await progress.json()).toEqual({ code: 'UNAUTHORIZED', statusCode: 401 });
    const signIn = await client.get('/dashboard/sign-in');
    expect(signIn.status).toBe(200);
    expect(await signIn.text()).toContain('name="secret" type="password"');
  });

  it('refuses a wrong secret without setting a cookie', async () => {
    const client = new DashboardClient(base);
    const res = await client.signIn('sk_live_not-a-real-secret-at-all-000000000000');
    expect(res.status).toBe(401);
    expect(res.headers.getSetCookie()).toEqual([]);
    expect(await res.text()).toContain('That is not a valid project secret.');
    expect((await client.get('/dashboard/broadcasts')).status).toBe(303);
  });

  it('signs in with an HttpOnly, SameSite=Strict cookie that holds a random id, never the secret', async () => {
    const client = new DashboardClient(base);
    const res = await client.signIn(world.secret);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/dashboard/broadcasts');
    const [cookie = ''] = res.headers.getSetCookie();
    const attributes = cookie.split('; ');
    expect(attributes[0]).toMatch(/^mailroom_dashboard=[A-Za-z0-9_-]{43}$/);
    expect(attributes).toEqual(expect.arrayContaining(['Path=/dashboard', 'HttpOnly', 'SameSite=Strict']));
    expect(attributes).not.toContain('Secure');
    expect(cookie).not.toContain(world.secret);
    expect(cookie).not.toContain(world.secret.slice(8, 30));
    expect(cookie).not.toMatch(/Max-Age|Expires/);
    expect((await client.get('/dashboard/broadcasts')).status).toBe(200);

    // Behind a TLS-terminating proxy the cookie is Secure.
    const tls = new DashboardClient(base);
    const behindProxy = await tls.post(
      '/dashboard/sign-in',
      { secret: world.secret },
      { 'x-forwarded-proto': 'https' },
    );
    expect(behindProxy.headers.getSetCookie()[0]?.split('; ')).toContain('Secure');
  });

  it('refuses a sign-in form posted from another site', async () => {
    const client = new DashboardClient(base);
    const byOrigin = await client.post(
      '/dashboard/sign-in',
      { secret: world.secret },
      { origin: 'http://evil.test' },
    );
    expect(byOrigin.status).toBe(403);
    expect(byOrigin.headers.getSetCookie()).toEqual([]);
    const byFetchSite = await client.post(
      '/dashboard/sign-in',
      { secret: world.secret },
      { 'sec-fetch-site': 'cross-site' },
    );
    expect(byFetchSite.status).toBe(403);
    const sameOrigin = await client.post('/dashboard/sign-in', { secret: world.secret }, { origin: base });
    expect(sameOrigin.status).toBe(303);
  });

  it('serves pages with a strict policy: no remote source, nonce scripts, no framing, no caching', async () => {
    const client = new DashboardClient(base);
    await client.signIn(world.secret);
    for (const path of [
      '/dashboard/sign-in',
      '/dashboard/broadcasts',
      `/dashboard/broadcasts/${world.ref}`,
    ]) {
      const res = await client.get(path);
      expect(res.status, path).toBe(200);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toMatch(/script-src 'nonce-[A-Za-z0-9+/=]+'(;|$)/);
      expect(csp).not.toMatch(/https?:|unsafe-inline|unsafe-eval|\*/);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('same-origin');
      expect(res.headers.get('x-request-id')).toBeTruthy();
      const body = await res.text();
      const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
      expect(body).toContain(`<script nonce="${nonce}">`);
      // Nothing loaded from elsewhere: no URL with a scheme in any src or href.
      expect(body).not.toMatch(/(src|href)="(https?:)?\/\//);
    }
  });

  it('escapes hostile subjects, names, addresses, replies and template sources', async () => {
    const client = new DashboardClient(base);
    await client.signIn(world.secret);
    const pages = [
      '/dashboard/broadcasts',
      `/dashboard/broadcasts/${world.ref}?q=o`,
      `/dashboard/broadcasts/${world.ref}?q=bounce`,
      `/dashboard/broadcasts/${world.ref}/delivery?address=${encodeURIComponent(HOSTILE_ADDRESS)}`,
      `/dashboard/broadcasts/${world.ref}/delivery?address=${encodeURIComponent(BOUNCE)}`,
      '/dashboard/templates/welcome',
      '/dashboard/audience',
    ];
    const bodies = await Promise.all(pages.map(async (p) => (await client.get(p)).text()));
    const all = bodies.join('\n');
    expect(all).not.toContain('<img src=x');
    expect(all).not.toContain('<script>alert');
    expect(all).not.toContain('<i>VIP</i>');
    expect(all).not.toContain('<b>Corp</b>');
    expect(all).not.toContain(`${HOSTILE_ADDRESS}`.replace('&', '&c'));
    expect(bodies[0]).toContain('&lt;img src=x onerror=alert(1)&gt;Deal');
    expect(bodies[0]).toContain('Acme &lt;b&gt;Corp&lt;/b&gt;');
    expect(bodies[1]).toContain('o&#39;neil&amp;co@evil.test');
    expect(bodies[1]).toContain('&lt;script&gt;alert(2)&lt;/script&gt;');
    expect(bodies[2]).toContain('550 5.1.1 &lt;script&gt;alert(3)&lt;/script&gt; no such user');
    expect(bodies[3]).toContain('<h1>o&#39;neil&amp;co@evil.test</h1>');
    expect(bodies[4]).toContain('&lt;script&gt;alert(3)&lt;/script&gt;');
    expect(bodies[5]).toContain('&lt;script&gt;alert(4)&lt;/script&gt;');
    expect(bodies[6]).toContain('&lt;i&gt;VIP&lt;/i&gt;');
    // The address is encoded in links, so it cannot break out of the attribute either.
    expect(bodies[1]).toContain(`delivery?address=o%27neil%26co%40evil.test`);
  });

  it('shows broadcasts with counts and progress, and the progress endpoint reports them', async () => {
    const client = new DashboardClient(base);
    await client.signIn(world.secret);
    const list = await (await client.get('/dashboard/broadcasts')).text();
    expect(list).toContain(`data-copy="${world.ref}"`);
    expect(list).toContain('<span class="badge completed" data-status-badge>completed</span>');
    expect(list).toContain('sent <b data-count="sent">119</b>');
    expect(list).toContain('bounced <b data-count="bounced">1</b>');
    expect(list).toContain('value="100"');
    expect(list).not.toContain('Secret plans of Other');
    expect(list).not.toContain('Receipt 42');
    const progress = await client.get(`/dashboard/broadcasts/${world.ref}/progress.json`);
    expect(progress.headers.get('content-type')).toContain('application/json');
    expect(await progress.json()).toEqual({
      ref: world.ref,
      status: 'completed',
      counts: {
        queued: 0,
        sending: 0,
        sent: 119,
        failed: 0,
        suppressed: 0,
        skipped: 0,
        bounced: 1,
        complained: 0,
      },
      total: 120,
      done: 120,
      percent: 100,
    });
    const messages = await (await client.get('/dashboard/messages')).text();
    expect(messages).toContain('Receipt 42');
    expect(messages).not.toContain('Deal');
    const message = await (await client.get(`/dashboard/messages/${world.messageRef}`)).text();
    expect(message).toContain('buyer@example.test');
  });

  it('searches deliveries by address prefix and pages through them', async () => {
    const client = new DashboardClient(base);
    await client.signIn(world.secret);
    const page = `/dashboard/broadcasts/${world.ref}`;
    const first = await (await client.get(page)).text();
    const addresses = (text: string) => [...text.matchAll(/delivery\?address=([^"&]+)/g)].map((m) => m[1]);
    expect(addresses(first)).toHaveLength(50);
    const next = /href="([^"]+)" rel="next"/.exec(first)?.[1]?.replaceAll('&amp;', '&') ?? '';
    expect(next).toMatch(/after=/);
    const second = await (await client.get(next)).text();
    expect(addresses(second)).toHaveLength(50);
    expect(addresses(second)[0]).not.toBe(addresses(first)[0]);
    expect(second).toContain('First page');

    const search = await (await client.get(`${page}?q=member01`)).text();
    expect(addresses(search)).toEqual(Array.from({ length: 10 }, (_, i) => `member01${i}%40example.test`));
    const exact = await (
      await client.get(`${page}?q=${encodeURIComponent('BOUNCE@EVIL.TEST'.toLowerCase())}`)
    ).text();
    expect(addresses(exact)).toEqual(['bounce%40evil.test']);
    const bounced = await (await client.get(`${page}?status=bounced`)).text();
    expect(addresses(bounced)).toEqual(['bounce%40evil.test']);
    const none = await (await client.get(`${page}?q=nobody`)).text();
    expect(none).toContain('No delivery matches.');
  });

  it('previews a kept message in a frame whose document is sandboxed by its own policy', async () => {
    const client = new DashboardClient(base);
    await client.signIn(world.secret);
    const address = encodeURIComponent('member007@example.test');
    const page = await (
      await client.get(`/dashboard/broadcasts/${world.ref}/delivery?address=${address}`)
    ).text();
    expect(page).toContain('<iframe class="preview" title="Message preview" sandbox=""');
    const src = /<iframe[^>]+src="([^"]+)"/.exec(page)?.[1]?.replaceAll('&amp;', '&') ?? '';
    expect(src).toBe(`/dashboard/broadcasts/${world.ref}/preview?address=${address}`);
    const preview = await client.get(src);
    expect(preview.status).toBe(200);
    expect(preview.headers.get('content-security-policy')).toMatch(/^sandbox; default-src 'none';/);
    expect(preview.headers.get('content-security-policy')).toContain("frame-ancestors 'self'");
    expect(preview.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(await preview.text()).toContain('<p>Hi member007</p>');
    // The hostile name was escaped when the message was rendered.
    const hostile = await client.get(
      `/dashboard/broadcasts/${world.ref}/preview?address=${encodeURIComponent(HOSTILE_ADDRESS)}`,
    );
    expect(await hostile.text()).toContain('&lt;script&gt;alert(2)&lt;/script&gt;');
    // The message was sent without storeContent: nothing to preview.
    const message = await client.get(
      `/dashboard/messages/${world.messageRef}/preview?address=buyer%40example.test`,
    );
    expect(message.status).toBe(404);
  });

  it('renders a template preview from sample variables, and says what is wrong with bad ones', async () => {
    const client = new DashboardClient(base);
    await client.signIn(world.secret);
    const list = await (await client.get('/dashboard/templates')).text();
    expect(list).toContain('href="/dashboard/templates/welcome"');
    const sample = `variables=${encodeURIComponent('{"offer":"50% <off>"}')}&name=Grace+Hopper&address=grace%40example.test`;
    const page = await (await client.get(`/dashboard/templates/welcome?${sample}`)).text();
    expect(page).toContain('<dd>Welcome Grace</dd>');
    const preview = await client.get(`/dashboard/templates/welcome/preview?${sample}`);
    expect(preview.headers.get('content-security-policy')).toMatch(/^sandbox;/);
    expect(await preview.text()).toContain('<p>Hello Grace, 50% &lt;off&gt;</p>');
    const bad = await (await client.get('/dashboard/templates/welcome?variables=%7Bnope')).text();
    expect(bad).toContain('The variables are not valid JSON');
    const badPreview = await client.get('/dashboard/templates/welcome/preview?variables=%5B1%5D');
    expect(badPreview.status).toBe(400);
  });

  it('lists audience groups with their member counts', async () => {
    const client = new DashboardClient(base);
    await client.signIn(world.secret);
    const page = await (await client.get('/dashboard/audience')).text();
    expect(page).toMatch(
      /<code>vip<\/code><\/td><td data-label="Name">&lt;i&gt;VIP&lt;\/i&gt;<\/td><td data-label="Members">120</,
    );
  });

  it("answers another project's refs exactly as refs that do not exist", async () => {
    const client = new DashboardClient(base);
    await client.signIn(world.secret);
    const strip = (text: string) =>
      text.replace(/request <code>[^<]+<\/code>/, '').replace(/nonce="[^"]+"/g, '');
    const foreign = await client.get(`/dashboard/broadcasts/${world.foreignRef}`);
    const missing = await client.get('/dashboard/broadcasts/bc_doesnotexist0000000000000');
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(strip(await foreign.text())).toBe(strip(await missing.text()));
    for (const path of [
      `/dashboard/broadcasts/${world.foreignRef}/progress.json`,
      `/dashboard/broadcasts/${world.foreignRef}/delivery?address=x%40other.test`,
      `/dashboard/broadcasts/${world.foreignRef}/preview?address=x%40other.test`,
      `/dashboard/messages/${world.ref}`,
      `/dashboard/broadcasts/${world.messageRef}`,
      `/dashboard/broadcasts/${world.ref}/delivery?address=nobody%40example.test`,
      `/dashboard/broadcasts/${world.ref}/delivery?address=not-an-address`,
      '/dashboard/templates/foreign',
      '/dashboard/nowhere',
    ]) {
      expect((await client.get(path)).status, path).toBe(404);
    }
    // Signed in to the other project, the broadcast is there.
    const other = new DashboardClient(base);
    await other.signIn(world.foreignSecret);
    const page = await (await other.get(`/dashboard/broadcasts/${world.foreignRef}`)).text();
    expect(page).toContain('Secret plans of Other');
    expect((await other.get(`/dashboard/broadcasts/${world.ref}`)).status).toBe(404);
  });

  it('requires the session token on every form that changes something', async () => {
    const { ref } = await world.mailroom.broadcast(world.secret, {
      subject: 'Later',
      sender: SENDER,
      message: 'Soon',
      recipients: ['later@example.test'],
      options: { scheduleFor: new Date(Date.now() + 3_600_000).toISOString() },
    });
    const client = new DashboardClient(base);
    await client.signIn(world.secret);
    const token = await client.csrf();

    const noToken = await client.post(`/dashboard/broadcasts/${ref}/cancel`, {});
    expect(noToken.status).toBe(403);
    const wrongToken = await client.post(`/dashboard/broadcasts/${ref}/cancel`, {
      _csrf: `${token.slice(1)}x`,
    });
    expect(wrongToken.status).toBe(403);
    const crossSite = await client.post(
      `/dashboard/broadcasts/${ref}/cancel`,
      { _csrf: token },
      { origin: 'http://evil.test' },
    );
    expect(crossSite.status).toBe(403);
    expect((await world.mailroom.getMailing(world.secret, ref)).status).toBe('scheduled');

    // Another session's token is not this session's.
    const other = new DashboardClient(base);
    await other.signIn(world.secret);
    expect(
      (await client.post(`/dashboard/broadcasts/${ref}/cancel`, { _csrf: await other.csrf() })).status,
    ).toBe(403);

    const cancel = await client.post(`/dashboard/broadcasts/${ref}/cancel`, { _csrf: token });
    expect(cancel.status).toBe(303);
    expect(cancel.headers.get('location')).toBe(`/dashboard/broadcasts/${ref}`);
    expect((await world.mailroom.getMailing(world.secret, ref)).status).toBe('cancelled');
    expect((await client.get(`/dashboard/broadcasts/${ref}/cancel`)).status).toBe(405);
  });

  it('signs out only with the session token, and the old cookie is worthless afterwards', async () => {
    const client = new DashboardClient(base);
    await client.signIn(world.secret);
    const cookie = client.cookie;
    const refused = await client.post('/dashboard/sign-out', {});
    expect(refused.status).toBe(403);
    expect((await client.get('/dashboard/broadcasts')).status).toBe(200);

    const out = await client.post('/dashboard/sign-out', { _csrf: await client.csrf() });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/dashboard/sign-in');
    const cleared = out.headers.getSetCookie()[0] ?? '';
    expect(cleared).toMatch(/^mailroom_dashboard=; Path=\/dashboard; HttpOnly; SameSite=Strict; Max-Age=0/);
    client.cookie = cookie;
    expect((await client.get('/dashboard/broadcasts')).status).toBe(303);
    expect((await client.get(`/dashboard/broadcasts/${world.ref}/progress.json`)).status).toBe(401);
  });
});

describe('dashboard options and mounting', () => {
  it('is absent when disabled, and lives under another prefix when asked', async () => {
    const world = await createWorld();
    const off = await startFastify(world.mailroom, { dashboard: { enabled: false } });
    const moved = await startFastify(world.mailroom, { dashboard: { prefix: '/admin/mail' } });
    try {
      const res = await fetch(`${urlOf(off)}/dashboard/sign-in`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toContain('application/json');
      const client = new DashboardClient(urlOf(moved));
      expect((await client.get('/dashboard/sign-in')).status).toBe(404);
      const signIn = await client.post('/admin/mail/sign-in', { secret: world.secret });
      expect(signIn.headers.get('location')).toBe('/admin/mail/broadcasts');
      expect(signIn.headers.getSetCookie()[0]).toContain('Path=/admin/mail;');
    } finally {
      await off.close();
      await moved.close();
      await world.mailroom.close();
    }
  });

  it('works behind the Express router mounted under /api, with links and cookie path below it', async () => {
    const world = await createWorld();
    const app = express();
    app.use('/api', mailroomRouter(world.mailroom));
    const server = await new Promise<ReturnType<typeof app.listen>>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      const client = new DashboardClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api`);
      const signIn = await client.signIn(world.secret);
      expect(signIn.status).toBe(303);
      expect(signIn.headers.get('location')).toBe('/api/dashboard/broadcasts');
      expect(signIn.headers.getSetCookie()[0]).toContain('Path=/api/dashboard;');
      const page = await (await client.get('/dashboard/broadcasts')).text();
      expect(page).toContain(`href="/api/dashboard/broadcasts/${world.ref}"`);
      const search = await (await client.get(`/dashboard/broadcasts/${world.ref}?q=member11`)).text();
      expect([...search.matchAll(/delivery\?address=/g)]).toHaveLength(8);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await world.mailroom.close();
    }
  });
});
