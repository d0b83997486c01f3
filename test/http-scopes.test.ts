import { type AuthContext, createMailroom, type KeyScope, type Mailroom, scopeAllows } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchRoute, ROUTE_NAMES, type RouteName } from '../packages/http/src/routes/routes.js';
import { type DnsZoneServer, publish, startDnsZone } from './support/dns-zone.js';
import { listenMailroom } from './support/http-harness.js';

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
  ok: 200 | 204 | 401 | 404 | 422;
  /** The status for another project's full key (default `ok`: the route acts in the caller's project). */
  other?: 200 | 400 | 404 | 422;
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
async function templateRef(env: Env): Promise<string> {
  const ref = `t${env.n}`;
  await env.mailroom.templates.create(env.acme, { ref, format: 'text', source: 'Hello {{ name }}' });
  return ref;
}
async function senderAddress(env: Env): Promise<string> {
  return (await env.mailroom.senders.add(env.acme, { address: `s${env.n}@acme.test` })).address;
}
async function suppressedAddress(env: Env): Promise<string> {
  return (await env.mailroom.suppressions.add(env.acme, { address: `x${env.n}@b.test` })).address;
}
async function groupRef(env: Env): Promise<string> {
  const ref = `g${env.n}`;
  await env.mailroom.audience.createGroup(env.acme, { ref });
  return ref;
}
/** A profile of Acme's audience (made by a broadcast to it). */
async function profileAddress(env: Env): Promise<string> {
  const address = `p${env.n}@b.test`;
  await env.mailroom.broadcast(env.acme, {
    ...BROADCAST,
    recipients: [{ address }],
    options: { scheduleFor: LATER() },
  });
  return address;
}
/** A topic of Acme's. */
async function topicKey(env: Env): Promise<string> {
  const key = `t${env.n}`;
  await env.mailroom.topics.create(env.acme, { key, name: 'News' });
  return key;
}
/** A workflow definition that needs no template. */
const WORKFLOW = { name: 'Nudge', trigger: { event: 'signup' }, steps: [{ type: 'wait', duration: '1h' }] };
/** A workflow of Acme's. */
async function workflowId(env: Env): Promise<string> {
  return (await env.mailroom.automations.create(env.acme, WORKFLOW)).id;
}
/** A signup form of Acme's, to a topic of its own. */
async function formRef(env: Env): Promise<string> {
  const topic = await topicKey(env);
  const form = await env.mailroom.forms.create(env.acme, {
    name: 'Footer',
    topic,
    consentText: 'Send me news',
    sender: 'news@acme.test',
  });
  return form.ref;
}
/** A receiving route of Acme's (its address pattern unique across both binders' runs). */
async function inboundRouteId(env: Env): Promise<string> {
  const route = await env.mailroom.receiving.addRoute(env.acme, {
    domain: `in${env.n}.acme.test`,
    pattern: 'support',
    destination: { kind: 'store' },
  });
  return route.id;
}
async function messageRef(env: Env): Promise<string> {
  return (await env.mailroom.send(env.acme, SEND)).ref;
}
async function throwawayKey(env: Env): Promise<string> {
  return (await env.mailroom.keys.create(env.acme, { scope: 'read' })).key.id;
}

/** THE TABLE: one row per route and method. */
const ROWS: readonly Row[] = [
  { route: 'send', method: 'POST', sample: '/send/mail', ok: 200, body: SEND },
  { route: 'send-batch', method: 'POST', sample: '/send/mail/batch', ok: 200, body: { items: [SEND] } },
  { route: 'broadcast', method: 'POST', sample: '/send/mail/broadcast', ok: 200, body: BROADCAST },
  { route: 'broadcast', method: 'POST', sample: '/send/mail/broadast', ok: 200, body: BROADCAST },
  { route: 'openapi', method: 'GET', sample: '/openapi.json', ok: 200 },
  { route: 'openapi', method: 'HEAD', sample: '/openapi.json', ok: 200 },
  { route: 'unsubscribe', method: 'GET', sample: '/unsubscribe/bogus', ok: 404 },
  { route: 'unsubscribe', method: 'HEAD', sample: '/unsubscribe/bogus', ok: 404 },
  { route: 'unsubscribe', method: 'POST', sample: '/unsubscribe/bogus', ok: 404 },
  { route: 'preferences', method: 'GET', sample: '/preferences/p1.bogus', ok: 404 },
  { route: 'preferences', method: 'HEAD', sample: '/preferences/p1.bogus', ok: 404 },
  { route: 'preferences', method: 'POST', sample: '/preferences/p1.bogus', ok: 404 },
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
  { route: 'templates', method: 'GET', sample: '/templates', ok: 200 },
  { route: 'templates', method: 'HEAD', sample: '/templates', ok: 200 },
  {
    route: 'templates',
    method: 'POST',
    sample: '/templates',
    ok: 200,
    prepare: async (env) => ({
      path: '/templates',
      body: { ref: `n${env.n}`, format: 'text', source: 'Hello' },
    }),
  },
  ...(['GET', 'HEAD'] as const).map(
    (method): Row => ({
      route: 'template',
      method,
      sample: '/templates/t_x',
      ok: 200,
      other: 404,
      prepare: async (env) => ({ path: `/templates/${await templateRef(env)}` }),
    }),
  ),
  {
    route: 'template',
    method: 'PUT',
    sample: '/templates/t_x',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/templates/${await templateRef(env)}`, body: { source: 'Hi again' } }),
  },
  {
    route: 'template',
    method: 'DELETE',
    sample: '/templates/t_x',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/templates/${await templateRef(env)}` }),
  },
  {
    route: 'template-validate',
    method: 'POST',
    sample: '/templates/t_x/validate',
    ok: 200,
    // Validation also checks a source given in the body without a stored template: for another project
    // the ref names nothing, so the empty body lacks its `format` (400), and nothing of Acme's is read.
    other: 400,
    prepare: async (env) => ({ path: `/templates/${await templateRef(env)}/validate` }),
  },
  {
    route: 'template-preview',
    method: 'POST',
    sample: '/templates/t_x/preview',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/templates/${await templateRef(env)}/preview` }),
  },
  { route: 'senders', method: 'GET', sample: '/senders', ok: 200 },
  { route: 'senders', method: 'HEAD', sample: '/senders', ok: 200 },
  {
    route: 'senders',
    method: 'POST',
    sample: '/senders',
    ok: 200,
    prepare: async (env) => ({ path: '/senders', body: { address: `p${env.n}@acme.test` } }),
  },
  {
    route: 'sender',
    method: 'DELETE',
    sample: '/senders/s%40acme.test',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/senders/${encodeURIComponent(await senderAddress(env))}` }),
  },
  { route: 'suppressions', method: 'GET', sample: '/suppressions', ok: 200 },
  { route: 'suppressions', method: 'HEAD', sample: '/suppressions', ok: 200 },
  {
    route: 'suppressions',
    method: 'POST',
    sample: '/suppressions',
    ok: 200,
    prepare: async (env) => ({ path: '/suppressions', body: { address: `q${env.n}@b.test` } }),
  },
  {
    route: 'suppression',
    method: 'DELETE',
    sample: '/suppressions/x%40b.test',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/suppressions/${encodeURIComponent(await suppressedAddress(env))}` }),
  },
  { route: 'audience-groups', method: 'GET', sample: '/audience/groups', ok: 200 },
  { route: 'audience-groups', method: 'HEAD', sample: '/audience/groups', ok: 200 },
  {
    route: 'audience-groups',
    method: 'POST',
    sample: '/audience/groups',
    ok: 200,
    prepare: async (env) => ({ path: '/audience/groups', body: { ref: `ng${env.n}` } }),
  },
  {
    route: 'audience-group',
    method: 'DELETE',
    sample: '/audience/groups/g_x',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/audience/groups/${await groupRef(env)}` }),
  },
  ...(['GET', 'HEAD'] as const).map(
    (method): Row => ({
      route: 'audience-members',
      method,
      sample: '/audience/groups/g_x/members',
      ok: 200,
      other: 404,
      prepare: async (env) => ({ path: `/audience/groups/${await groupRef(env)}/members` }),
    }),
  ),
  { route: 'audience-profiles', method: 'GET', sample: '/audience/profiles', ok: 200 },
  { route: 'audience-profiles', method: 'HEAD', sample: '/audience/profiles', ok: 200 },
  ...(['GET', 'HEAD', 'DELETE'] as const).map(
    (method): Row => ({
      route: 'audience-profile',
      method,
      sample: '/audience/profiles/p%40b.test',
      ok: 200,
      other: 404,
      prepare: async (env) => ({
        path: `/audience/profiles/${encodeURIComponent(await profileAddress(env))}`,
      }),
    }),
  ),
  {
    route: 'audience-profile',
    method: 'PATCH',
    sample: '/audience/profiles/p%40b.test',
    ok: 200,
    other: 404,
    prepare: async (env) => ({
      path: `/audience/profiles/${encodeURIComponent(await profileAddress(env))}`,
      body: { name: 'Pat' },
    }),
  },
  {
    route: 'audience-imports',
    method: 'POST',
    sample: '/audience/imports',
    // The CSV is probed at once; nothing answers on the allowed 127.0.0.1:9, so an allowed caller gets
    // the fetch's refusal (422), and another project's key the unknown group (422): what matters here is
    // who gets past the key check.
    ok: 422,
    other: 422,
    prepare: async (env) => ({
      path: '/audience/imports',
      body: { url: 'http://127.0.0.1:9/list.csv', group: await groupRef(env) },
    }),
  },
  ...(['GET', 'HEAD'] as const).map(
    (method): Row => ({ route: 'audience-import', method, sample: '/audience/imports/imp_x', ok: 404 }),
  ),
  { route: 'broadcasts-list', method: 'GET', sample: '/broadcasts', ok: 200 },
  { route: 'broadcasts-list', method: 'HEAD', sample: '/broadcasts', ok: 200 },
  ...(['GET', 'HEAD'] as const).map(
    (method): Row => ({
      route: 'broadcast-status',
      method,
      sample: '/broadcasts/bc_x',
      ok: 200,
      other: 404,
      prepare: async (env) => ({ path: `/broadcasts/${await scheduledBroadcast(env)}` }),
    }),
  ),
  ...(['GET', 'HEAD'] as const).map(
    (method): Row => ({
      route: 'message-status',
      method,
      sample: '/messages/msg_x',
      ok: 200,
      other: 404,
      prepare: async (env) => ({ path: `/messages/${await messageRef(env)}` }),
    }),
  ),
  { route: 'pauses', method: 'GET', sample: '/pauses', ok: 200 },
  { route: 'pauses', method: 'HEAD', sample: '/pauses', ok: 200 },
  ...(['pause', 'resume'] as const).map(
    (action): Row => ({
      route: `broadcast-${action}`,
      method: 'POST',
      sample: `/broadcasts/bc_x/${action}`,
      ok: 200,
      other: 404,
      prepare: async (env) => ({
        path: `/broadcasts/${await scheduledBroadcast(env)}/${action}`,
        ...(action === 'pause' ? { body: { reason: 'checking the list' } } : {}),
      }),
    }),
  ),
  { route: 'sending-pause', method: 'POST', sample: '/sending/pause', ok: 200, body: { reason: 'audit' } },
  { route: 'sending-resume', method: 'POST', sample: '/sending/resume', ok: 200 },
  {
    route: 'destination-pause',
    method: 'POST',
    sample: '/destinations/gmail.com/pause',
    ok: 200,
    prepare: async (env) => ({ path: `/destinations/d${env.n}.test/pause`, body: { minutes: 30 } }),
  },
  { route: 'destination-resume', method: 'POST', sample: '/destinations/gmail.com/resume', ok: 200 },
  { route: 'topics', method: 'GET', sample: '/topics', ok: 200 },
  { route: 'topics', method: 'HEAD', sample: '/topics', ok: 200 },
  {
    route: 'topics',
    method: 'POST',
    sample: '/topics',
    ok: 200,
    prepare: async (env) => ({ path: '/topics', body: { key: `t${env.n}`, name: 'News' } }),
  },
  ...(['GET', 'HEAD', 'DELETE'] as const).map(
    (method): Row => ({
      route: 'topic',
      method,
      sample: '/topics/news',
      ok: 200,
      other: 404,
      prepare: async (env) => ({ path: `/topics/${await topicKey(env)}` }),
    }),
  ),
  {
    route: 'topic',
    method: 'PATCH',
    sample: '/topics/news',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/topics/${await topicKey(env)}`, body: { name: 'Product news' } }),
  },
  ...(['GET', 'HEAD'] as const).map(
    (method): Row => ({
      route: 'audience-profile-topics',
      method,
      sample: '/audience/profiles/p%40b.test/topics',
      ok: 200,
      other: 404,
      prepare: async (env) => ({
        path: `/audience/profiles/${encodeURIComponent(await profileAddress(env))}/topics`,
      }),
    }),
  ),
  {
    route: 'audience-profile-topics',
    method: 'PUT',
    sample: '/audience/profiles/p%40b.test/topics',
    ok: 200,
    // Another project has no such topic: 404, and nothing written.
    other: 404,
    prepare: async (env) => ({
      path: `/audience/profiles/${encodeURIComponent(await profileAddress(env))}/topics`,
      body: { topics: { [await topicKey(env)]: 'subscribed' } },
    }),
  },
  { route: 'project-brand', method: 'GET', sample: '/project/brand', ok: 200 },
  { route: 'project-brand', method: 'HEAD', sample: '/project/brand', ok: 200 },
  {
    route: 'project-brand',
    method: 'PATCH',
    sample: '/project/brand',
    ok: 200,
    body: { color: '#336699' },
  },
  { route: 'inbound-routes', method: 'GET', sample: '/inbound/routes', ok: 200 },
  { route: 'inbound-routes', method: 'HEAD', sample: '/inbound/routes', ok: 200 },
  {
    route: 'inbound-routes',
    method: 'POST',
    sample: '/inbound/routes',
    ok: 200,
    prepare: async (env) => ({
      path: '/inbound/routes',
      body: { domain: `new${env.n}.acme.test`, pattern: '*', destination: { kind: 'store' } },
    }),
  },
  {
    route: 'inbound-route',
    method: 'DELETE',
    sample: '/inbound/routes/rte_x',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/inbound/routes/${await inboundRouteId(env)}` }),
  },
  { route: 'inbound-messages', method: 'GET', sample: '/inbound/messages', ok: 200 },
  { route: 'inbound-messages', method: 'HEAD', sample: '/inbound/messages', ok: 200 },
  ...(['GET', 'HEAD'] as const).map(
    (method): Row => ({
      route: 'inbound-message',
      method,
      sample: '/inbound/messages/inm_x',
      ok: 404,
    }),
  ),
  { route: 'inbound-settings', method: 'GET', sample: '/inbound/settings', ok: 200 },
  { route: 'inbound-settings', method: 'HEAD', sample: '/inbound/settings', ok: 200 },
  {
    route: 'inbound-settings',
    method: 'PATCH',
    sample: '/inbound/settings',
    ok: 200,
    body: { retention_days: 14 },
  },
  { route: 'inbound-attachment', method: 'GET', sample: '/inbound/attachments/bogus', ok: 404 },
  { route: 'inbound-attachment', method: 'HEAD', sample: '/inbound/attachments/bogus', ok: 404 },
  ...(['GET', 'HEAD'] as const).map(
    (method): Row => ({
      route: 'audience-profile-consent',
      method,
      sample: '/audience/profiles/p%40b.test/consent',
      ok: 200,
    }),
  ),
  {
    route: 'events-track',
    method: 'POST',
    sample: '/events/track',
    ok: 200,
    body: { event: 'signup', contact: 'a@b.test' },
  },
  { route: 'automations', method: 'GET', sample: '/automations', ok: 200 },
  { route: 'automations', method: 'HEAD', sample: '/automations', ok: 200 },
  { route: 'automations', method: 'POST', sample: '/automations', ok: 200, body: WORKFLOW },
  ...(['GET', 'HEAD', 'DELETE'] as const).map(
    (method): Row => ({
      route: 'automation',
      method,
      sample: '/automations/wf_x',
      ok: 200,
      other: 404,
      prepare: async (env) => ({ path: `/automations/${await workflowId(env)}` }),
    }),
  ),
  {
    route: 'automation',
    method: 'PUT',
    sample: '/automations/wf_x',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/automations/${await workflowId(env)}`, body: WORKFLOW }),
  },
  ...(['pause', 'resume'] as const).map(
    (action): Row => ({
      route: `automation-${action}`,
      method: 'POST',
      sample: `/automations/wf_x/${action}`,
      ok: 200,
      other: 404,
      prepare: async (env) => ({ path: `/automations/${await workflowId(env)}/${action}` }),
    }),
  ),
  ...(['GET', 'HEAD'] as const).map(
    (method): Row => ({
      route: 'automation-runs',
      method,
      sample: '/automations/wf_x/runs',
      ok: 200,
      other: 404,
      prepare: async (env) => ({ path: `/automations/${await workflowId(env)}/runs` }),
    }),
  ),
  ...(['GET', 'HEAD'] as const).map(
    (method): Row => ({
      route: 'automation-stats',
      method,
      sample: '/automations/wf_x/stats',
      ok: 200,
      other: 404,
      prepare: async (env) => ({ path: `/automations/${await workflowId(env)}/stats` }),
    }),
  ),
  { route: 'forms', method: 'GET', sample: '/forms', ok: 200 },
  { route: 'forms', method: 'HEAD', sample: '/forms', ok: 200 },
  {
    route: 'forms',
    method: 'POST',
    sample: '/forms',
    ok: 200,
    // Another project has no such topic: 404, and nothing written.
    other: 404,
    prepare: async (env) => ({
      path: '/forms',
      body: { name: 'Footer', topic: await topicKey(env), consentText: 'Yes', sender: 'news@acme.test' },
    }),
  },
  ...(['GET', 'HEAD', 'DELETE'] as const).map(
    (method): Row => ({
      route: 'form',
      method,
      sample: '/forms/frm_x',
      ok: 200,
      other: 404,
      prepare: async (env) => ({ path: `/forms/${await formRef(env)}` }),
    }),
  ),
  {
    route: 'form',
    method: 'PATCH',
    sample: '/forms/frm_x',
    ok: 200,
    other: 404,
    prepare: async (env) => ({ path: `/forms/${await formRef(env)}`, body: { consentText: 'Yes, v2' } }),
  },
  // Public: the form's ref is the only name; an unknown form is 404 whoever calls.
  {
    route: 'subscribe',
    method: 'POST',
    sample: '/subscribe/frm_bogus',
    ok: 404,
    body: { email: 'a@b.test' },
  },
  { route: 'subscribe', method: 'OPTIONS', sample: '/subscribe/frm_bogus', ok: 204 },
  { route: 'confirm', method: 'GET', sample: '/confirm/bogus', ok: 404 },
  { route: 'confirm', method: 'HEAD', sample: '/confirm/bogus', ok: 404 },
  { route: 'confirm', method: 'POST', sample: '/confirm/bogus', ok: 404 },
  { route: 'confirm-resend', method: 'POST', sample: '/confirm/bogus/resend', ok: 404 },
];

/** The access routes.ts declares for a row's method. */
function declared(row: Row): 'public' | KeyScope {
  const access = matchRoute(row.sample, true)?.access[row.method];
  if (access === undefined) throw new Error(`${row.method} ${row.sample} declares no access`);
  return access;
}

/** The status a caller must get: 401 and 403 from the declared access, then what the row says. */
/** Routes that create, rotate or revoke keys (`method route`). */
const KEY_MANAGEMENT = new Set(['POST keys', 'DELETE key', 'POST key-rotate']);

function expectedStatus(row: Row, caller: Caller): number {
  const needed = declared(row);
  if (needed === 'public') return row.ok;
  if (caller === 'none' || caller === 'revoked' || caller === 'rotated-after-grace') return 401;
  const scope: KeyScope = caller === 'sending' || caller === 'read' ? caller : 'full';
  if (!scopeAllows(scope, needed)) return 403;
  // A key being retired manages no keys (issue 36): it cannot mint its own never-expiring successor.
  if (caller === 'rotated-in-grace' && KEY_MANAGEMENT.has(`${row.method} ${row.route}`)) return 403;
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
    // The public signup endpoint's per-client limit has its own test (signup-flood.exclusive.test.ts).
    const options = {
      authFailureLimit: false,
      signupRateLimit: {
        perIp: { perMinute: 6000, burst: 1000 },
        perAddress: { perMinute: 6000, burst: 1000 },
      },
    } as const;
    ({ url: base, close } = await listenMailroom(binder, mailroom, options));
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
      // A scope refusal names the scope needed; a retired key's refusal says why it cannot manage keys.
      expect(JSON.parse(text).message).toContain(
        caller === 'rotated-in-grace' ? 'grace period' : `\`${declared(row)}\``,
      );
    }
  });
});
