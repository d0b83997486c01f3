/** What a path does. */
export type RouteName = 'send' | 'broadcast' | 'openapi';

/** A matched route and the methods it takes. */
export interface RouteMatch {
  name: RouteName;
  allow: readonly string[];
}

const POST_ONLY = ['POST'] as const;
const READ_ONLY = ['GET', 'HEAD'] as const;

/** The routes of wire-compat.md, relative to the mount point. */
const ROUTES: ReadonlyMap<string, RouteMatch> = new Map<string, RouteMatch>([
  ['/send/mail', { name: 'send', allow: POST_ONLY }],
  ['/send/mail/broadcast', { name: 'broadcast', allow: POST_ONLY }],
  // The TypeScript SDK's spelling of both broadcast calls.
  ['/send/mail/broadast', { name: 'broadcast', allow: POST_ONLY }],
  ['/openapi.json', { name: 'openapi', allow: READ_ONLY }],
]);

/** The route at `path`, or `undefined`; `/openapi.json` exists only when the document is served. */
export function matchRoute(path: string, openapi: boolean): RouteMatch | undefined {
  const route = ROUTES.get(path);
  if (route?.name === 'openapi' && !openapi) return undefined;
  return route;
}
