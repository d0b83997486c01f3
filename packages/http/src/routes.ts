/** What a path does: each name has exactly one handler in the route table (route-table.ts). */
export type RouteName =
  | 'send'
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
  | 'domain-rotate';

/** A matched route and the methods it takes. */
export interface MatchedRoute {
  name: RouteName;
  allow: readonly string[];
  /**
   * The path's parameters: `token` of `unsubscribe` and tracking, `ref` of `cancel` and `reschedule`, `id` of
   * a webhook endpoint, `name` of a sending domain.
   */
  params?: Readonly<Record<string, string>>;
}

const POST_ONLY = ['POST'] as const;
const READ_ONLY = ['GET', 'HEAD'] as const;
/** GET shows the confirmation page (never changes anything); POST is the one-click unsubscribe (RFC 8058). */
const UNSUBSCRIBE_METHODS = ['GET', 'HEAD', 'POST'] as const;

const UNSUBSCRIBE_PATH = /^\/unsubscribe\/([^/]+)$/;
const WEBHOOK_PATH = /^\/webhooks\/([^/]+)(\/rotate-secret)?$/;
const DOMAIN_PATH = /^\/domains\/([^/]+)(?:\/(verify|rotate-dkim))?$/;
// Open and click tracking: tokens are URL-safe as made, so they are taken undecoded.
const TRACK_CLICK_PATH = /^\/t\/c\/([A-Za-z0-9._~-]+)$/;
const TRACK_OPEN_PATH = /^\/t\/o\/([A-Za-z0-9._~-]+)\.gif$/;
// Both spellings of the broadcast path, as for the batch calls.
const BROADCAST_ACTION_PATH = /^\/send\/mail\/broadc?ast\/([^/]+)\/(cancel|reschedule)$/;

/** The routes of wire-compat.md, relative to the mount point. */
const ROUTES: ReadonlyMap<string, MatchedRoute> = new Map<string, MatchedRoute>([
  ['/send/mail', { name: 'send', allow: POST_ONLY }],
  ['/send/mail/broadcast', { name: 'broadcast', allow: POST_ONLY }],
  // The TypeScript SDK's spelling of both broadcast calls.
  ['/send/mail/broadast', { name: 'broadcast', allow: POST_ONLY }],
  ['/openapi.json', { name: 'openapi', allow: READ_ONLY }],
  // Provider notifications of bounces and complaints: signed by the provider, no project secret.
  ['/inbound/ses', { name: 'inbound-ses', allow: POST_ONLY }],
  ['/inbound/mailgun', { name: 'inbound-mailgun', allow: POST_ONLY }],
  ['/events', { name: 'events', allow: READ_ONLY }],
  ['/webhooks', { name: 'webhooks', allow: ['GET', 'HEAD', 'POST'] }],
  ['/domains', { name: 'domains', allow: ['GET', 'HEAD', 'POST'] }],
]);

/** The route at `path`, or `undefined`; `/openapi.json` exists only when the document is served. */
export function matchRoute(path: string, openapi: boolean): MatchedRoute | undefined {
  const route = ROUTES.get(path);
  if (route) return route.name === 'openapi' && !openapi ? undefined : route;
  const unsubscribe = UNSUBSCRIBE_PATH.exec(path);
  if (unsubscribe) {
    const token = decode(unsubscribe[1] as string);
    return token === undefined
      ? undefined
      : { name: 'unsubscribe', allow: UNSUBSCRIBE_METHODS, params: { token } };
  }
  const webhook = WEBHOOK_PATH.exec(path);
  if (webhook) {
    const id = decode(webhook[1] as string);
    if (id === undefined) return undefined;
    return webhook[2]
      ? { name: 'webhook-rotate', allow: POST_ONLY, params: { id } }
      : { name: 'webhook', allow: ['PATCH', 'DELETE'], params: { id } };
  }
  const domain = DOMAIN_PATH.exec(path);
  if (domain) {
    // The name is checked (and normalised) by the engine, which refuses a malformed one with 400.
    const name = decode(domain[1] as string);
    if (name === undefined) return undefined;
    if (domain[2] === 'verify') return { name: 'domain-verify', allow: POST_ONLY, params: { name } };
    if (domain[2] === 'rotate-dkim') return { name: 'domain-rotate', allow: POST_ONLY, params: { name } };
    return { name: 'domain', allow: ['GET', 'HEAD', 'DELETE'], params: { name } };
  }
  const click = TRACK_CLICK_PATH.exec(path);
  if (click) return { name: 'track-click', allow: READ_ONLY, params: { token: click[1] as string } };
  const open = TRACK_OPEN_PATH.exec(path);
  if (open) return { name: 'track-open', allow: READ_ONLY, params: { token: open[1] as string } };
  const action = BROADCAST_ACTION_PATH.exec(path);
  if (action) {
    const ref = decode(action[1] as string);
    const name = action[2] === 'cancel' ? 'cancel' : 'reschedule';
    return ref === undefined ? undefined : { name, allow: POST_ONLY, params: { ref } };
  }
  return undefined;
}

/** A percent-decoded path segment, or undefined when its escapes are broken. */
function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
