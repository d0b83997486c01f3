import type { KeyScope } from '@mailroom/core';

/** What a path does: each name has exactly one handler in the route table (route-table.ts). */
export type RouteName =
  | 'send'
  | 'send-batch'
  | 'broadcast'
  | 'openapi'
  | 'unsubscribe'
  | 'cancel'
  | 'reschedule'
  | 'inbound-ses'
  | 'inbound-mailgun'
  | 'events'
  | 'webhooks'
  | 'webhook'
  | 'webhook-rotate'
  | 'track-click'
  | 'track-open'
  | 'domains'
  | 'domain'
  | 'domain-verify'
  | 'domain-rotate'
  | 'keys'
  | 'key'
  | 'key-rotate'
  | 'templates'
  | 'template'
  | 'template-validate'
  | 'template-preview'
  | 'senders'
  | 'sender'
  | 'suppressions'
  | 'suppression'
  | 'audience-groups'
  | 'audience-group'
  | 'audience-members'
  | 'audience-profiles'
  | 'audience-profile'
  | 'audience-imports'
  | 'audience-import'
  | 'broadcasts-list'
  | 'broadcast-status'
  | 'message-status'
  | 'pauses'
  | 'broadcast-pause'
  | 'broadcast-resume'
  | 'sending-pause'
  | 'sending-resume'
  | 'destination-pause'
  | 'destination-resume'
  | 'topics'
  | 'topic'
  | 'audience-profile-topics'
  | 'audience-profile-consent'
  | 'forms'
  | 'form'
  | 'subscribe'
  | 'confirm'
  | 'confirm-resend'
  | 'preferences'
  | 'project-brand'
  | 'events-track'
  | 'automations'
  | 'automation'
  | 'automation-pause'
  | 'automation-resume'
  | 'automation-runs'
  | 'automation-stats'
  | 'inbound-routes'
  | 'inbound-route'
  | 'inbound-messages'
  | 'inbound-message'
  | 'inbound-settings'
  | 'inbound-attachment';

/**
 * Who may call one method of a route: anyone (`public`: the route authenticates otherwise, or not at
 * all), or a project key holding at least this scope (`scopeAllows` in `@mailroom/core`).
 */
export type RouteAccess = 'public' | KeyScope;

/**
 * The methods a route takes, each with the least access it needs. The route's `allow` list is its keys;
 * the scope check reads the method's entry, in one place for every route.
 */
export type MethodAccess = Readonly<Partial<Record<string, RouteAccess>>>;

/** A matched route and the methods it takes. */
export interface MatchedRoute {
  name: RouteName;
  /** The methods the route takes (the keys of `access`), for 405 answers and their `Allow` header. */
  allow: readonly string[];
  /** The least access each method needs. */
  access: MethodAccess;
  /**
   * The path's parameters: `token` of `unsubscribe`, `preferences` and tracking, `ref` of `cancel` and `reschedule`, `id` of
   * a webhook endpoint, a key or an import, `name` of a sending domain, `ref` of a template, a broadcast or
   * a message (or a message's RFC Message-ID), `email` of a sender, a suppression or a profile, `group` of
   * an audience group, `name` of a paused destination, `key` of a topic, `id` of a workflow, `ref` of a signup
   * form (`formRef` on the public `subscribe`), `token` of a confirmation link.
   */
  params?: Readonly<Record<string, string>>;
}

/**
 * Every route name, at run time: the acceptance test of scopes (test/http-scopes.test.ts) needs a row for
 * each. The `satisfies` makes a name added to `RouteName` without its line here a compile error.
 */
export const ROUTE_NAMES = Object.keys({
  send: true,
  'send-batch': true,
  broadcast: true,
  openapi: true,
  unsubscribe: true,
  cancel: true,
  reschedule: true,
  'inbound-ses': true,
  'inbound-mailgun': true,
  events: true,
  webhooks: true,
  webhook: true,
  'webhook-rotate': true,
  'track-click': true,
  'track-open': true,
  domains: true,
  domain: true,
  'domain-verify': true,
  'domain-rotate': true,
  keys: true,
  key: true,
  'key-rotate': true,
  templates: true,
  template: true,
  'template-validate': true,
  'template-preview': true,
  senders: true,
  sender: true,
  suppressions: true,
  suppression: true,
  'audience-groups': true,
  'audience-group': true,
  'audience-members': true,
  'audience-profiles': true,
  'audience-profile': true,
  'audience-imports': true,
  'audience-import': true,
  'broadcasts-list': true,
  'broadcast-status': true,
  'message-status': true,
  pauses: true,
  'broadcast-pause': true,
  'broadcast-resume': true,
  'sending-pause': true,
  'sending-resume': true,
  'destination-pause': true,
  'destination-resume': true,
  topics: true,
  topic: true,
  'audience-profile-topics': true,
  'audience-profile-consent': true,
  forms: true,
  form: true,
  subscribe: true,
  confirm: true,
  'confirm-resend': true,
  preferences: true,
  'project-brand': true,
  'events-track': true,
  automations: true,
  automation: true,
  'automation-pause': true,
  'automation-resume': true,
  'automation-runs': true,
  'automation-stats': true,
  'inbound-routes': true,
  'inbound-route': true,
  'inbound-messages': true,
  'inbound-message': true,
  'inbound-settings': true,
  'inbound-attachment': true,
} satisfies Record<RouteName, true>) as readonly RouteName[];

/** A route's entry: its name, the access of each method, and its path parameters. */
function entry(
  name: RouteName,
  access: MethodAccess,
  params?: Readonly<Record<string, string>>,
): MatchedRoute {
  return { name, allow: Object.keys(access), access, ...(params ? { params } : {}) };
}

/** The spec's send endpoints: a `sending` key may call them. */
const SENDING = { POST: 'sending' } as const;
/** A management action: a `full` key only. */
const FULL_POST = { POST: 'full' } as const;
/** A management collection: read with a `read` key, add with a `full` one. */
const READ_ADD = { GET: 'read', HEAD: 'read', POST: 'full' } as const;
/** A management read: a `read` key. */
const READ = { GET: 'read', HEAD: 'read' } as const;
/** Public reads (documents, pages, tracking): no key. */
const PUBLIC_READ = { GET: 'public', HEAD: 'public' } as const;
/** Signed provider notifications: no project key (the provider's signature is checked). */
const PUBLIC_POST = { POST: 'public' } as const;
/** GET shows the confirmation page (never changes anything); POST is the one-click unsubscribe (RFC 8058). */
const UNSUBSCRIBE_ACCESS = { GET: 'public', HEAD: 'public', POST: 'public' } as const;

/** GET shows the contact's preference page; POST saves its form (with the page's CSRF token). */
const PREFERENCES_ACCESS = { GET: 'public', HEAD: 'public', POST: 'public' } as const;

const UNSUBSCRIBE_PATH = /^\/unsubscribe\/([^/]+)$/;
// Signup forms (signup-routes.ts): the public POST of a website's form (OPTIONS: its CORS preflight), and
// the confirmation link of double opt-in, whose GET only shows a button (a link scanner confirms nothing).
const SUBSCRIBE_PATH = /^\/subscribe\/([^/]+)$/;
const SUBSCRIBE_ACCESS = { POST: 'public', OPTIONS: 'public' } as const;
const CONFIRM_PATH = /^\/confirm\/([^/]+)(\/resend)?$/;
const CONFIRM_ACCESS = { GET: 'public', HEAD: 'public', POST: 'public' } as const;
const FORM_PATH = /^\/forms\/([^/]+)$/;
// The preference centre (issue 38): tokens are URL-safe as made, so they are taken undecoded.
const PREFERENCES_PATH = /^\/preferences\/([A-Za-z0-9._-]+)$/;
const WEBHOOK_PATH = /^\/webhooks\/([^/]+)(\/rotate-secret)?$/;
const DOMAIN_PATH = /^\/domains\/([^/]+)(?:\/(verify|rotate-dkim))?$/;
const KEY_PATH = /^\/keys\/([^/]+?)(\/rotate)?$/;
// Open and click tracking: tokens are URL-safe as made, so they are taken undecoded.
const TRACK_CLICK_PATH = /^\/t\/c\/([A-Za-z0-9._~-]+)$/;
const TRACK_OPEN_PATH = /^\/t\/o\/([A-Za-z0-9._~-]+)\.gif$/;
const TEMPLATE_PATH = /^\/templates\/([^/]+)(?:\/(validate|preview))?$/;
const SENDER_PATH = /^\/senders\/([^/]+)$/;
const SUPPRESSION_PATH = /^\/suppressions\/([^/]+)$/;
// Both spellings of the broadcast path, as for the batch calls.
const BROADCAST_ACTION_PATH = /^\/send\/mail\/broadc?ast\/([^/]+)\/(cancel|reschedule)$/;
// The audience's and the status reads' paths; an address or a Message-ID is percent-encoded in its segment.
const AUDIENCE_GROUP_PATH = /^\/audience\/groups\/([^/]+)(\/members)?$/;
const AUDIENCE_PROFILE_PATH = /^\/audience\/profiles\/([^/]+)$/;
const AUDIENCE_IMPORT_PATH = /^\/audience\/imports\/([^/]+)$/;
// Topics and consent (topic-routes.ts): a topic by its key, a contact's topic states and consent history.
const TOPIC_PATH = /^\/topics\/([^/]+)$/;
const PROFILE_TOPICS_PATH = /^\/audience\/profiles\/([^/]+)\/topics$/;
const PROFILE_CONSENT_PATH = /^\/audience\/profiles\/([^/]+)\/consent$/;
// Automations (automation-routes.ts): a workflow by its id, its pause and resume, its runs.
const AUTOMATION_PATH = /^\/automations\/([^/]+)$/;
const AUTOMATION_PAUSE_PATH = /^\/automations\/([^/]+)\/pause$/;
const AUTOMATION_RESUME_PATH = /^\/automations\/([^/]+)\/resume$/;
const AUTOMATION_RUNS_PATH = /^\/automations\/([^/]+)\/runs$/;
const AUTOMATION_STATS_PATH = /^\/automations\/([^/]+)\/stats$/;
// Receiving (receiving-routes.ts): a route and a received message by id.
const INBOUND_ROUTE_PATH = /^\/inbound\/routes\/([^/]+)$/;
const INBOUND_MESSAGE_PATH = /^\/inbound\/messages\/([^/]+)$/;
// An attachment of a received message: its signed token is the credential (no key).
const INBOUND_ATTACHMENT_PATH = /^\/inbound\/attachments\/([A-Za-z0-9._-]+)$/;
const BROADCAST_STATUS_PATH = /^\/broadcasts\/([^/]+)$/;
const MESSAGE_STATUS_PATH = /^\/messages\/([^/]+)$/;
// Pause and resume (pause-routes.ts): a broadcast by its ref, a destination by its name.
const BROADCAST_PAUSE_PATH = /^\/broadcasts\/([^/]+)\/pause$/;
const BROADCAST_RESUME_PATH = /^\/broadcasts\/([^/]+)\/resume$/;
const DESTINATION_PAUSE_PATH = /^\/destinations\/([^/]+)\/pause$/;
const DESTINATION_RESUME_PATH = /^\/destinations\/([^/]+)\/resume$/;

/** The routes of one path parameter each: pattern, route name, parameter name, access. */
const PARAM_ROUTES: ReadonlyArray<readonly [RegExp, RouteName, string, MethodAccess]> = [
  [
    AUDIENCE_PROFILE_PATH,
    'audience-profile',
    'email',
    { GET: 'read', HEAD: 'read', PATCH: 'full', DELETE: 'full' },
  ],
  [AUDIENCE_IMPORT_PATH, 'audience-import', 'id', READ],
  [TOPIC_PATH, 'topic', 'key', { GET: 'read', HEAD: 'read', PATCH: 'full', DELETE: 'full' }],
  [FORM_PATH, 'form', 'ref', { GET: 'read', HEAD: 'read', PATCH: 'full', DELETE: 'full' }],
  [SUBSCRIBE_PATH, 'subscribe', 'formRef', SUBSCRIBE_ACCESS],
  [PROFILE_TOPICS_PATH, 'audience-profile-topics', 'email', { GET: 'read', HEAD: 'read', PUT: 'full' }],
  [PROFILE_CONSENT_PATH, 'audience-profile-consent', 'email', READ],
  [AUTOMATION_PATH, 'automation', 'id', { GET: 'read', HEAD: 'read', PUT: 'full', DELETE: 'full' }],
  [AUTOMATION_PAUSE_PATH, 'automation-pause', 'id', FULL_POST],
  [AUTOMATION_RESUME_PATH, 'automation-resume', 'id', FULL_POST],
  [AUTOMATION_RUNS_PATH, 'automation-runs', 'id', READ],
  [AUTOMATION_STATS_PATH, 'automation-stats', 'id', READ],
  [INBOUND_ROUTE_PATH, 'inbound-route', 'id', { DELETE: 'full' }],
  [INBOUND_MESSAGE_PATH, 'inbound-message', 'id', READ],
  [BROADCAST_STATUS_PATH, 'broadcast-status', 'ref', READ],
  [MESSAGE_STATUS_PATH, 'message-status', 'ref', READ],
  [BROADCAST_PAUSE_PATH, 'broadcast-pause', 'ref', FULL_POST],
  [BROADCAST_RESUME_PATH, 'broadcast-resume', 'ref', FULL_POST],
  [DESTINATION_PAUSE_PATH, 'destination-pause', 'name', FULL_POST],
  [DESTINATION_RESUME_PATH, 'destination-resume', 'name', FULL_POST],
];

/** The routes of wire-compat.md, relative to the mount point. */
const ROUTES: ReadonlyMap<string, MatchedRoute> = new Map<string, MatchedRoute>([
  ['/send/mail', entry('send', SENDING)],
  ['/send/mail/batch', entry('send-batch', SENDING)],
  ['/send/mail/broadcast', entry('broadcast', SENDING)],
  // The TypeScript SDK's spelling of both broadcast calls.
  ['/send/mail/broadast', entry('broadcast', SENDING)],
  ['/openapi.json', entry('openapi', PUBLIC_READ)],
  // Provider notifications of bounces and complaints: signed by the provider, no project secret.
  ['/inbound/ses', entry('inbound-ses', PUBLIC_POST)],
  ['/inbound/mailgun', entry('inbound-mailgun', PUBLIC_POST)],
  ['/events', entry('events', { GET: 'read', HEAD: 'read' })],
  ['/webhooks', entry('webhooks', READ_ADD)],
  ['/domains', entry('domains', READ_ADD)],
  ['/keys', entry('keys', READ_ADD)],
  ['/templates', entry('templates', READ_ADD)],
  ['/senders', entry('senders', READ_ADD)],
  ['/suppressions', entry('suppressions', READ_ADD)],
  ['/audience/groups', entry('audience-groups', READ_ADD)],
  ['/audience/profiles', entry('audience-profiles', READ)],
  ['/audience/imports', entry('audience-imports', FULL_POST)],
  ['/broadcasts', entry('broadcasts-list', READ)],
  ['/pauses', entry('pauses', READ)],
  ['/topics', entry('topics', READ_ADD)],
  ['/forms', entry('forms', READ_ADD)],
  ['/project/brand', entry('project-brand', { GET: 'read', HEAD: 'read', PATCH: 'full' })],
  // A tracked event is the app telling of its contact, as a send: a `sending` key may.
  ['/events/track', entry('events-track', SENDING)],
  ['/automations', entry('automations', READ_ADD)],
  ['/inbound/routes', entry('inbound-routes', READ_ADD)],
  ['/inbound/messages', entry('inbound-messages', READ)],
  ['/inbound/settings', entry('inbound-settings', { GET: 'read', HEAD: 'read', PATCH: 'full' })],
  ['/sending/pause', entry('sending-pause', FULL_POST)],
  ['/sending/resume', entry('sending-resume', FULL_POST)],
]);

/** The route at `path`, or `undefined`; `/openapi.json` exists only when the document is served. */
export function matchRoute(path: string, openapi: boolean): MatchedRoute | undefined {
  const route = ROUTES.get(path);
  if (route) return route.name === 'openapi' && !openapi ? undefined : route;
  const preferences = PREFERENCES_PATH.exec(path);
  if (preferences) return entry('preferences', PREFERENCES_ACCESS, { token: preferences[1] as string });
  const unsubscribe = UNSUBSCRIBE_PATH.exec(path);
  if (unsubscribe) {
    const token = decode(unsubscribe[1] as string);
    return token === undefined ? undefined : entry('unsubscribe', UNSUBSCRIBE_ACCESS, { token });
  }
  const confirm = CONFIRM_PATH.exec(path);
  if (confirm) {
    const token = decode(confirm[1] as string);
    if (token === undefined) return undefined;
    return confirm[2]
      ? entry('confirm-resend', PUBLIC_POST, { token })
      : entry('confirm', CONFIRM_ACCESS, { token });
  }
  const webhook = WEBHOOK_PATH.exec(path);
  if (webhook) {
    const id = decode(webhook[1] as string);
    if (id === undefined) return undefined;
    return webhook[2]
      ? entry('webhook-rotate', FULL_POST, { id })
      : entry('webhook', { PATCH: 'full', DELETE: 'full' }, { id });
  }
  const domain = DOMAIN_PATH.exec(path);
  if (domain) {
    // The name is checked (and normalised) by the engine, which refuses a malformed one with 400.
    const name = decode(domain[1] as string);
    if (name === undefined) return undefined;
    if (domain[2] === 'verify') return entry('domain-verify', FULL_POST, { name });
    if (domain[2] === 'rotate-dkim') return entry('domain-rotate', FULL_POST, { name });
    return entry('domain', { GET: 'read', HEAD: 'read', DELETE: 'full' }, { name });
  }
  const key = KEY_PATH.exec(path);
  if (key) {
    const id = decode(key[1] as string);
    if (id === undefined) return undefined;
    return key[2] ? entry('key-rotate', FULL_POST, { id }) : entry('key', { DELETE: 'full' }, { id });
  }
  const resource = matchResource(path);
  if (resource) return resource;
  const click = TRACK_CLICK_PATH.exec(path);
  if (click) return entry('track-click', PUBLIC_READ, { token: click[1] as string });
  const open = TRACK_OPEN_PATH.exec(path);
  if (open) return entry('track-open', PUBLIC_READ, { token: open[1] as string });
  const attachment = INBOUND_ATTACHMENT_PATH.exec(path);
  if (attachment) return entry('inbound-attachment', PUBLIC_READ, { token: attachment[1] as string });
  const action = BROADCAST_ACTION_PATH.exec(path);
  if (action) {
    const ref = decode(action[1] as string);
    const name = action[2] === 'cancel' ? 'cancel' : 'reschedule';
    return ref === undefined ? undefined : entry(name, FULL_POST, { ref });
  }
  const group = AUDIENCE_GROUP_PATH.exec(path);
  if (group) {
    const ref = decode(group[1] as string);
    if (ref === undefined) return undefined;
    return group[2]
      ? entry('audience-members', READ, { group: ref })
      : entry('audience-group', { DELETE: 'full' }, { group: ref });
  }
  for (const [pattern, name, param, access] of PARAM_ROUTES) {
    const match = pattern.exec(path);
    if (!match) continue;
    const value = decode(match[1] as string);
    return value === undefined ? undefined : entry(name, access, { [param]: value });
  }
  return undefined;
}

/**
 * A template, sender or suppression path. Validate and preview change nothing: a `read` key may call them,
 * though they are POSTs (they take a body).
 */
function matchResource(path: string): MatchedRoute | undefined {
  const template = TEMPLATE_PATH.exec(path);
  if (template) {
    const ref = decode(template[1] as string);
    if (ref === undefined) return undefined;
    if (template[2] === 'validate') return entry('template-validate', { POST: 'read' }, { ref });
    if (template[2] === 'preview') return entry('template-preview', { POST: 'read' }, { ref });
    return entry('template', { GET: 'read', HEAD: 'read', PUT: 'full', DELETE: 'full' }, { ref });
  }
  const sender = SENDER_PATH.exec(path);
  const suppression = sender ? null : SUPPRESSION_PATH.exec(path);
  const address = sender ?? suppression;
  if (!address) return undefined;
  const email = decode(address[1] as string);
  if (email === undefined) return undefined;
  return entry(sender ? 'sender' : 'suppression', { DELETE: 'full' }, { email });
}

/** A percent-decoded path segment, or undefined when its escapes are broken. */
function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
