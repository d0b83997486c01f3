import type { AddressInfo } from 'node:net';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient } from './support/dashboard-session.js';
import { type DnsZoneServer, publish, startDnsZone } from './support/dns-zone.js';

/**
 * The dashboard's Domains page over HTTP (Fastify on 127.0.0.1, checks against a DNS zone on loopback): each
 * domain's records ready to copy with what the last check saw of each, "check now" (CSRF and project scope
 * checked), and the unverified domains mail was sent from under `warn`.
 */

/** A browser-like client: keeps the session cookie, never follows redirects. */
describe('dashboard: domains', () => {
  let mailroom: Mailroom;
  let app: FastifyInstance;
  let dns: DnsZoneServer;
  let client: DashboardClient;
  let secret: string;
  let otherSecret: string;

  beforeAll(async () => {
    dns = await startDnsZone({});
    mailroom = createMailroom({
      store: memoryStore(),
      transport: memoryTransport(),
      domains: { resolver: dns.resolver(), relay: { addresses: ['127.0.0.1'] }, checkEveryMs: 0 },
    });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    otherSecret = (await mailroom.admin.createProject({ name: 'Other' })).secret;
    await mailroom.admin.addSender(created.project.id, { address: 'news@unadded.example' });
    app = Fastify();
    await app.register(mailroomPlugin, { mailroom });
    await app.listen({ port: 0, host: '127.0.0.1' });
    client = new DashboardClient(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
    await client.post('/dashboard/sign-in', { secret });
  });

  afterAll(async () => {
    await app.close();
    await mailroom.close();
    await dns.close();
  });

  it('shows the records ready to copy and, after "check now", what was seen of each', async () => {
    const empty = await (await client.get('/dashboard/domains')).text();
    expect(empty).toContain('No sending domains.');
    expect(empty).toContain('aria-current="page">Domains<');

    const added = await mailroom.addDomain(secret, 'acme.example');
    await mailroom.addDomain(otherSecret, 'other.example');
    const dkim = added.records[0];
    if (!dkim) throw new Error('no DKIM record');
    const before = await (await client.get('/dashboard/domains')).text();
    expect(before).toContain(
      '<span class="mono">acme.example</span> <span class="badge pending">pending</span>',
    );
    expect(before).toContain(`data-copy="${dkim.value}"`);
    expect(before).toContain(`data-copy="${dkim.name}"`);
    expect(before).toContain('not checked yet');
    expect(before).not.toContain('other.example');

    dns.zone = publish(
      {},
      added.records.filter((r) => r.kind !== 'dmarc'),
    );
    const token = await client.csrf('/dashboard/domains');
    expect((await client.post('/dashboard/domains/acme.example/verify', {})).status).toBe(403);
    expect((await client.post('/dashboard/domains/other.example/verify', { _csrf: token })).status).toBe(404);
    const checked = await client.post('/dashboard/domains/acme.example/verify', { _csrf: token });
    expect(checked.status).toBe(303);
    expect(checked.headers.get('location')).toBe('/dashboard/domains?checked=acme.example');
    const after = await (await client.get('/dashboard/domains?checked=acme.example')).text();
    expect(after).toContain('Checked acme.example.');
    expect(after).toMatch(/<span class="badge found">found<\/span>/);
    expect(after).toMatch(
      /<span class="badge missing">missing<\/span><br><span class="muted">No DMARC record at _dmarc\.acme\.example/,
    );
    expect(after).toContain(`Signs with</dt><dd><code>${added.keys[0]?.selector}</code>`);
  });

  it('lists the unverified domains mail was sent from', async () => {
    await mailroom.send(secret, {
      subject: 'Hi',
      sender: 'news@unadded.example',
      message: 'Hi',
      recipients: 'a@example.org',
    });
    const page = await (await client.get('/dashboard/domains')).text();
    expect(page).toContain('Sent from unverified domains');
    expect(page).toContain('unadded.example is not a domain of this project');
  });
});
