/**
 * Scoped keys, the acceptance table: EVERY route of routes.ts, each method it declares, called with each kind
 * of key (full, sending, read), a revoked key, a rotated key inside and after its grace period, another
 * project's key, and no key, over both binders (real servers on 127.0.0.1). The status each call must get is
 * the table below: the declared access decides 401 and 403; each row says what its route answers when allowed
 * (200) and to another project's key (its own project: 200; another project's resource: 404).
 *
 * A route added to routes.ts without its rows fails "has a row for every route and method" (and a name added
 * to `RouteName` without its line in `ROUTE_NAMES` fails the typecheck).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AuthContext, createMailroom, type KeyScope, type Mailroom, scopeAllows } from '@mailroom/core';
import { mailroomRouter } from '@mailroom/http/express';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchRoute, ROUTE_NAMES, type RouteName } from '../packages/http/src/routes.js';
import { type DnsZoneServer, publish, startDnsZone } from './support/dns-zone.js';

/** Who calls: a key of a scope, a key that no longer works, another project's key, or no key. */
type Caller =
  | 'full'
  | 'sending'
  | 'read'
  | 'revoked'
  | 'rotated-in-grace'
  | 'rotated-after-grace'
  | 'other'
  | 'none';
const CALLERS: readonly Caller[] = [
  'full',
  'sending',
  'read',
  'revoked',
  'rotated-in-grace',
  'rotated-after-grace',
  'other',
  'none',
];

/** What a call needs made first (a broadcast to cancel, an endpoint to delete), in Acme's project. */
interface Fixture {
  path: string;
  body?: unknown;
}

interface Row {
  route: RouteName;
  method: string;
  /** A path of the route, to check that routes.ts matches it to `route` (and read its declared access). */
  sample: string;
  /** The status when the caller may call it; for a `public` route, whoever calls. */
  ok: 200 | 401 | 404;
  /** The status for another project's full key (default `ok`: the route acts in the caller's project). */
  other?: 200 | 404;
  /** Makes the call's path and body (fresh per call: many calls change or delete what they name). */
  prepare?: (env: Env) => Promise<Fixture>;
  body?: unknown;
}

interface Env {
  mailroom: Mailroom;
  acme: AuthContext;
  n: number;
}

const SEND = { subject: 'Hi', sender: 'news@acme.test', message: 'Hello', recipients: 'a@b.test' };
const BROADCAST = {
  subject: 'News',
  sender: 'news@acme.test',
  message: 'Hello',
  recipients: [{ address: 'a@b.test' }],
};
const LATER = () => new Date(now + 30 * 86_400_000).toISOString();

async function scheduledBroadcast(env: Env): Promise<string> {
  const result = await env.mailroom.broadcast(env.acme, { ...BROADCAST, options: { scheduleFor: LATER() } });
  return result.ref;
}
async function webhookId(env: Env): Promise<string> {
  const added = await env.mailroom.webhooks.add(env.acme, { url: 'http://127.0.0.1:9/hook' });
  return added.endpoint.id;
}
async function domainName(env: Env): Promise<string> {
  const name = `d${env.n}.acme.test`;
  await env.mailroom.addDomain(env.acme, name, { keyType: 'ed25519' });
  return name;
}
/** A domain with its records published and verified: only such a domain's DKIM key rotates. */
async function verifiedDomain(env: Env): Promise<string> {
  const name = `v${env.n}.acme.test`;
  const domain = await env.mailroom.addDomain(env.acme, name, { keyType: 'ed25519' });
  publish(dns.zone, domain.records);
  await env.mailroom.verifyDomain(env.acme, name);
  return name;
}
async function throwawayKey(env: Env): Promise<string> {
  return (await env.mailroom.keys.create(env.acme, { scope: 'read' })).key.id;
}

/** THE TABLE: one row per route and method. */
const ROWS: readonly Row[] = [
  { route: 'send', method: 'POST', sample: '/send/mail', ok: 200, body: SEND },
  { route: 'broadcast', method: 'POST', sample: '/send/mail/broadcast', ok: 200, body: BROADCAST },
  { route: 'broadcast', method: 'POST', sample: '/send/mail/broadast', ok: 200, body: BROADCAST },
  { route: 'openapi', method: 'GET', sample: '/openapi.json', ok: 200 },
  { route: 'openapi', method: 'HEAD', sample: '/openapi.json', ok: 200 },
  { route: 'unsubscribe', method: 'GET', sample: '/unsubscribe/bogus', ok: 404 },
  { route: 'unsubscribe', method: 'HEAD', sample: '/unsubscribe/bogus', ok: 404 },
  { route: 'unsubscribe', method: 'POST', sample: '/unsubscribe/bogus', ok: 404 },
  {
    route: 'cancel',
    method: 'POST',
    sample: '/send/mail/broadcast/bc_x/cancel',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/send/mail/broadcast/${await scheduledBroadcast(env)}/cancel` }),
  },
  {
    route: 'reschedule',
    method: 'POST',
    sample: '/send/mail/broadcast/bc_x/reschedule',
    ok: 200,
    other: 404,
    prepare: async (env) => ({
      path: `/send/mail/broadcast/${await scheduledBroadcast(env)}/reschedule`,
      body: { scheduleFor: LATER() },
    }),
  },
  { route: 'inbound-ses', method: 'POST', sample: '/inbound/ses', ok: 404, body: {} },
  { route: 'inbound-mailgun', method: 'POST', sample: '/inbound/mailgun', ok: 404, body: {} },
  { route: 'events', method: 'GET', sample: '/events', ok: 200 },
  { route: 'events', method: 'HEAD', sample: '/events', ok: 200 },
  { route: 'webhooks', method: 'GET', sample: '/webhooks', ok: 200 },
  { route: 'webhooks', method: 'HEAD', sample: '/webhooks', ok: 200 },
  {
    route: 'webhooks',
    method: 'POST',
    sample: '/webhooks',
    ok: 200,
    body: { url: 'http://127.0.0.1:9/hook' },
  },
  {
    route: 'webhook',
    method: 'PATCH',
    sample: '/webhooks/wh_x',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/webhooks/${await webhookId(env)}`, body: { enabled: false } }),
  },
  {
    route: 'webhook',
    method: 'DELETE',
    sample: '/webhooks/wh_x',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/webhooks/${await webhookId(env)}` }),
  },
  {
    route: 'webhook-rotate',
    method: 'POST',
    sample: '/webhooks/wh_x/rotate-secret',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/webhooks/${await webhookId(env)}/rotate-secret` }),
  },
  { route: 'track-click', method: 'GET', sample: '/t/c/bogus', ok: 404 },
  { route: 'track-click', method: 'HEAD', sample: '/t/c/bogus', ok: 404 },
  { route: 'track-open', method: 'GET', sample: '/t/o/bogus.gif', ok: 404 },
  { route: 'track-open', method: 'HEAD', sample: '/t/o/bogus.gif', ok: 404 },
  { route: 'domains', method: 'GET', sample: '/domains', ok: 200 },
  { route: 'domains', method: 'HEAD', sample: '/domains', ok: 200 },
  {
    route: 'domains',
    method: 'POST',
    sample: '/domains',
    ok: 200,
    prepare: async (env) => ({
      path: '/domains',
      body: { domain: `n${env.n}.acme.test`, keyType: 'ed25519' },
    }),
  },
  {
    route: 'domain',
    method: 'GET',
    sample: '/domains/x.acme.test',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/domains/${await domainName(env)}` }),
  },
  {
    route: 'domain',
    method: 'HEAD',
    sample: '/domains/x.acme.test',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/domains/${await domainName(env)}` }),
  },
  {
    route: 'domain',
    method: 'DELETE',
    sample: '/domains/x.acme.test',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/domains/${await domainName(env)}` }),
  },
  {
    route: 'domain-verify',
    method: 'POST',
    sample: '/domains/x.acme.test/verify',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/domains/${await domainName(env)}/verify` }),
  },
  {
    route: 'domain-rotate',
    method: 'POST',
    sample: '/domains/x.acme.test/rotate-dkim',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/domains/${await verifiedDomain(env)}/rotate-dkim` }),
  },
  { route: 'keys', method: 'GET', sample: '/keys', ok: 200 },
  { route: 'keys', method: 'HEAD', sample: '/keys', ok: 200 },
  { route: 'keys', method: 'POST', sample: '/keys', ok: 200, body: { scope: 'read' } },
  {
    route: 'key',
    method: 'DELETE',
    sample: '/keys/key_x',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/keys/${await throwawayKey(env)}` }),
  },
  {
    route: 'key-rotate',
    method: 'POST',
    sample: '/keys/key_x/rotate',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/keys/${await throwawayKey(env)}/rotate`, body: { graceSeconds: 60 } }),
  },
];

/** The access routes.ts declares for a row's method. */
function declared(row: Row): 'public' | KeyScope {
  const access = matchRoute(row.sample, true)?.access[row.method];
  if (access === undefined) throw new Error(`${row.method} ${row.sample} declares no access`);
  return access;
}

/** The status a caller must get: 401 and 403 from the declared access, then what the row says. */
function expectedStatus(row: Row, caller: Caller): number {
  const needed = declared(row);
  if (needed === 'public') return row.ok;
  if (caller === 'none' || caller === 'revoked' || caller === 'rotated-after-grace') return 401;
  const scope: KeyScope = caller === 'sending' || caller === 'read' ? caller : 'full';
  if (!scopeAllows(scope, needed)) return 403;
  return caller === 'other' ? (row.other ?? row.ok) : row.ok;
}

/** The test clock: the engine reads it, so a rotated key's grace can be stepped past. */
let now = Date.parse('2031-03-01T12:00:00.000Z');
const GRACE_SECONDS = 3600;
/** Numbers fixtures' names across both binders: they share one DNS zone. */
let n = 0;

describe('the acceptance table covers routes.ts', () => {
  it('has a row for every route and every method it declares, and routes.ts matches each sample', () => {
    for (const row of ROWS) expect(matchRoute(row.sample, true)?.name, row.sample).toBe(row.route);
    for (const name of ROUTE_NAMES) {
      const rows = ROWS.filter((r) => r.route === name);
      expect(rows.length, `no row for route ${name}: add its rows to ROWS`).toBeGreaterThan(0);
      const access = matchRoute((rows[0] as Row).sample, true)?.access ?? {};
      for (const method of Object.keys(access)) {
        expect(
          rows.some((r) => r.method === method),
          `no row for ${method} of route ${name}`,
        ).toBe(true);
      }
    }
  });
});

let dns: DnsZoneServer;
beforeAll(async () => {
  dns = await startDnsZone({});
});
afterAll(() => dns.close());

describe.each(['express', 'fastify'] as const)('every route with every key (%s)', (binder) => {
  let mailroom: Mailroom;
  let close: () => Promise<void>;
  let base: string;
  let acme: AuthContext;
  const secrets = {} as Record<Exclude<Caller, 'none'>, string>;

  beforeAll(async () => {
    mailroom = createMailroom({
      store: memoryStore(),
      transport: memoryTransport(),
      clock: { now: () => new Date(now) },
      fetch: { allowHosts: ['127.0.0.1:9'] },
      domains: { resolver: dns.resolver(), relay: { addresses: ['127.0.0.1'] }, checkEveryMs: 0 },
    });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    const other = await mailroom.admin.createProject({ name: 'Other' });
    for (const project of [created.project, other.project]) {
      await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    }
    acme = await mailroom.authenticate(created.secret);
    secrets.full = created.secret;
    secrets.other = other.secret;
    secrets.sending = (await mailroom.keys.create(acme, { scope: 'sending' })).secret;
    secrets.read = (await mailroom.keys.create(acme, { scope: 'read' })).secret;
    const revoked = await mailroom.keys.create(acme, { scope: 'full' });
    await mailroom.keys.revoke(acme, revoked.key.id);
    secrets.revoked = revoked.secret;
    const rotated = await mailroom.keys.create(acme, { scope: 'full' });
    await mailroom.keys.rotate(acme, rotated.key.id, { graceSeconds: GRACE_SECONDS });
    secrets['rotated-in-grace'] = rotated.secret;
    secrets['rotated-after-grace'] = rotated.secret;

    // Wrong keys are part of the table: the per-address limit of wrong keys has its own test.
    const options = { authFailureLimit: false } as const;
    if (binder === 'express') {
      const app = express();
      app.use('/v1', mailroomRouter(mailroom, options));
      const server = await new Promise<Server>((resolve) => {
        const s = app.listen(0, '127.0.0.1', () => resolve(s));
      });
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      close = async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      };
    } else {
      const app = Fastify();
      await app.register(mailroomPlugin, { prefix: '/v1', mailroom, ...options });
      await app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`;
      close = () => app.close();
    }
  });

  afterAll(async () => {
    await close();
    await mailroom.close();
  });

  const cases = ROWS.flatMap((row) => CALLERS.map((caller) => ({ row, caller })));

  it.each(cases)('$row.method $row.sample as $caller', async ({ row, caller }) => {
    n += 1;
    const fixture = row.prepare
      ? await row.prepare({ mailroom, acme, n })
      : { path: row.sample, ...(row.body === undefined ? {} : { body: row.body }) };
    const headers: Record<string, string> = {};
    if (caller !== 'none') headers.authorization = `Bearer ${secrets[caller]}`;
    if (fixture.body !== undefined) headers['content-type'] = 'application/json';
    // The rotated key after its grace: the engine's clock moves past it for this call only.
    const step = caller === 'rotated-after-grace' ? (GRACE_SECONDS + 1) * 1000 : 0;
    now += step;
    let res: Response;
    try {
      res = await fetch(`${base}${fixture.path}`, {
        method: row.method,
        headers,
        ...(fixture.body === undefined ? {} : { body: JSON.stringify(fixture.body) }),
      });
    } finally {
      now -= step;
    }
    const text = await res.text();
    expect(res.status, `${row.method} ${fixture.path} as ${caller}: ${text.slice(0, 300)}`).toBe(
      expectedStatus(row, caller),
    );
    if (res.status === 403 && row.method !== 'HEAD') {
      expect(JSON.parse(text).message).toContain(`\`${declared(row)}\``);
    }
  });
});
