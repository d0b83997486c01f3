/**
 * Sending domains over HTTP (the Fastify binder on loopback, the checks against a DNS zone on loopback):
 * add, list, get, verify, rotate, remove; bad names refused with 400 naming the problem; the `enforce`
 * policy's 403; the OpenAPI document.
 */
import type { AddressInfo } from 'node:net';
import { createMailroom, type Mailroom } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import Fastify from 'fastify';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type DnsZoneServer, publish, startDnsZone } from './support/dns-zone.js';
import { callApi } from './support/http-harness.js';

interface Answer {
  status: number;
  json: {
    message: string;
    code?: string;
    issues?: Array<{ path: unknown[] }>;
    data: Record<string, unknown>;
  };
  text: string;
}

interface DomainJson {
  domain: string;
  state: string;
  check: string | null;
  signingSelector: string | null;
  keys: Array<{ selector: string; state: string }>;
  records: Array<{ kind: string; type: 'TXT' | 'MX'; name: string; value: string; priority?: number }>;
  findings: Array<{ kind: string; name: string; state: string }> | null;
}

let dns: DnsZoneServer;
beforeAll(async () => {
  dns = await startDnsZone({});
});
afterAll(() => dns.close());

describe('sending domains over HTTP', () => {
  let mailroom: Mailroom;
  let close: () => Promise<void>;
  let base: string;
  let secret: string;
  let otherSecret: string;

  async function start(sending: 'warn' | 'enforce'): Promise<void> {
    mailroom = createMailroom({
      store: memoryStore(),
      transport: memoryTransport(),
      domains: { sending, resolver: dns.resolver(), relay: { addresses: ['127.0.0.1'] }, checkEveryMs: 0 },
    });
    for (const name of ['Acme', 'Other']) {
      const created = await mailroom.admin.createProject({ name });
      await mailroom.admin.addSender(created.project.id, { address: 'news@acme.example' });
      if (name === 'Acme') secret = created.secret;
      else otherSecret = created.secret;
    }
    const app = Fastify();
    await app.register(mailroomPlugin, { prefix: '/v1', mailroom });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`;
    close = () => app.close();
  }

  beforeEach(async () => {
    dns.zone = {};
    await start('warn');
  });
  afterEach(async () => {
    await close();
    await mailroom.close();
  });

  const call = (
    method: string,
    path: string,
    body?: unknown,
    auth: string | null = secret,
  ): Promise<Answer> => callApi<Answer['json']>(base, method, path, body, auth);

  const domainOf = (answer: Answer) => answer.json.data.domain as DomainJson;

  it('adds a domain and answers its records; lists, gets, verifies, rotates and removes it', async () => {
    expect((await call('POST', '/domains', { domain: 'acme.example' }, null)).status).toBe(401);
    const added = await call('POST', '/domains', {
      domain: 'Acme.Example.',
      returnPath: 'bounces.acme.example',
    });
    expect(added.status, added.text).toBe(200);
    const domain = domainOf(added);
    expect(domain).toMatchObject({ domain: 'acme.example', state: 'pending', check: null });
    expect(domain.records.map((r) => [r.kind, r.type, r.name])).toEqual([
      ['dkim', 'TXT', `${domain.keys[0]?.selector}._domainkey.acme.example`],
      ['spf', 'TXT', 'acme.example'],
      ['dmarc', 'TXT', '_dmarc.acme.example'],
      ['return-path-spf', 'TXT', 'bounces.acme.example'],
    ]);
    expect(domain.records[1]?.value).toBe('v=spf1 ip4:127.0.0.1 ~all');
    expect(added.text).not.toContain('PRIVATE KEY');
    expect(added.text).not.toContain('mrk1.');

    expect((await call('POST', '/domains', { domain: 'acme.example' })).json.code).toBe('CONFLICT');
    const listed = await call('GET', '/domains');
    expect((listed.json.data.domains as DomainJson[]).map((d) => d.domain)).toEqual(['acme.example']);
    expect((await call('GET', '/domains', undefined, otherSecret)).json.data.domains).toEqual([]);
    expect((await call('GET', '/domains/acme.example', undefined, otherSecret)).status).toBe(404);
    expect(domainOf(await call('GET', '/domains/ACME.example')).domain).toBe('acme.example');

    const unpublished = await call('POST', '/domains/acme.example/verify');
    expect(unpublished.status).toBe(200);
    expect(unpublished.json.message).toBe('Domain not verified: see the findings');
    expect(domainOf(unpublished).findings?.find((f) => f.kind === 'dkim')).toMatchObject({
      state: 'missing',
    });

    dns.zone = publish({}, domain.records);
    const verified = await call('POST', '/domains/acme.example/verify');
    expect(verified.json.message).toBe('Domain verified');
    expect(domainOf(verified)).toMatchObject({
      state: 'verified',
      signingSelector: domain.keys[0]?.selector,
    });

    const rotated = await call('POST', '/domains/acme.example/rotate-dkim', { keyType: 'ed25519' });
    expect(rotated.status, rotated.text).toBe(200);
    expect(domainOf(rotated).keys.map((k) => k.state)).toEqual(['active', 'pending']);
    expect((await call('POST', '/domains/acme.example/rotate-dkim')).json.code).toBe('UNPROCESSABLE');
    expect(rotated.text).not.toContain('PRIVATE KEY');

    expect((await call('GET', '/domains/acme.example/verify')).status).toBe(405);
    expect((await call('DELETE', '/domains/acme.example', undefined, otherSecret)).status).toBe(404);
    expect((await call('DELETE', '/domains/acme.example')).status).toBe(200);
    expect((await call('GET', '/domains/acme.example')).status).toBe(404);
  });

  it.each([
    ['an IP address', '192.0.2.1', /is an IP address/],
    ['an IPv6 address', '[2001:db8::1]', /is an IP address/],
    ['a name without a dot', 'localhost', /has no dot/],
    ['a lone trailing dot', 'acme.', /has no dot/],
    ['an empty label', 'acme..example', /has an empty label/],
    ['a character no domain has', 'a_b.example', /contains "_"/],
    ['an all-numeric top-level label', 'acme.123', /all-numeric/],
  ])('refuses %s with 400 naming the problem (%s)', async (_what, name, problem) => {
    const added = await call('POST', '/domains', { domain: name });
    expect(added.status).toBe(400);
    expect(added.json.code).toBe('VALIDATION_FAILED');
    expect(added.json.message).toMatch(problem);
    expect(added.json.issues?.[0]?.path).toEqual(['domain']);
    const got = await call('GET', `/domains/${encodeURIComponent(name)}`);
    expect(got.status).toBe(400);
    expect(got.json.message).toMatch(problem);
    expect((await call('GET', '/domains')).json.data.domains).toEqual([]);
  });

  it('normalises an internationalised name to punycode; refuses a body without a domain', async () => {
    const added = await call('POST', '/domains', { domain: 'münchen.example' });
    expect(domainOf(added).domain).toBe('xn--mnchen-3ya.example');
    expect((await call('GET', '/domains/m%C3%BCnchen.example')).status).toBe(200);
    const missing = await call('POST', '/domains', { name: 'acme.example' });
    expect(missing.status).toBe(400);
    expect(missing.json.issues?.[0]?.path).toEqual(['domain']);
    expect(
      (await call('POST', '/domains', { domain: 'acme.example', keyType: 'dsa' })).json.issues?.[0]?.path,
    ).toEqual(['keyType']);
  });

  it('enforce: POST /send/mail from an unverified domain is 403 DOMAIN_NOT_VERIFIED naming the record', async () => {
    await close();
    await mailroom.close();
    await start('enforce');
    const message = {
      subject: 'Hi',
      sender: 'news@acme.example',
      message: 'Hi',
      recipients: 'a@example.org',
    };
    const never = await call('POST', '/send/mail', message);
    expect(never.status).toBe(403);
    expect(never.json.code).toBe('DOMAIN_NOT_VERIFIED');
    expect(never.json.message).toMatch(/acme\.example is not a domain of this project/);
    const domain = domainOf(await call('POST', '/domains', { domain: 'acme.example' }));
    dns.zone = publish(
      {},
      domain.records.filter((r) => r.kind !== 'dmarc'),
    );
    await call('POST', '/domains/acme.example/verify');
    const refused = await call('POST', '/send/mail', message);
    expect(refused.status).toBe(403);
    expect(refused.json.message).toContain('_dmarc.acme.example');
    publish(
      dns.zone,
      domain.records.filter((r) => r.kind === 'dmarc'),
    );
    await call('POST', '/domains/acme.example/verify');
    expect((await call('POST', '/send/mail', message)).status).toBe(200);
  });

  it('documents the routes, the error code and the domain events in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, { properties?: Record<string, { enum?: string[] }> }> };
      'x-error-codes': Record<string, { status: number }>;
    };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/domains',
        '/domains/{name}',
        '/domains/{name}/verify',
        '/domains/{name}/rotate-dkim',
      ]),
    );
    expect(Object.keys(doc.paths['/domains'] ?? {})).toEqual(['get', 'post']);
    expect(doc['x-error-codes'].DOMAIN_NOT_VERIFIED?.status).toBe(403);
    expect(doc.components.schemas.Event?.properties?.type?.enum).toEqual(
      expect.arrayContaining(['domain.verified', 'domain.failed']),
    );
    expect(doc.components.schemas.Domain).toBeDefined();
  });
});
