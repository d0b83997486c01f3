import type { AuthContext, KeyScope, Mailroom } from '@mailroom/core';
import { MailroomError, scopeAllows } from '@mailroom/core';
import type { AuthFailureLimit } from '../limits/auth-failure-limit.js';
import type { RequestRateLimiter } from '../limits/request-rate-limit.js';
import type { NeutralRequest } from '../neutral/types.js';
import type { MatchedRoute } from './routes.js';

/** `Bearer <token>`, the scheme case-insensitive (RFC 7235); anything else is malformed. */
const BEARER = /^bearer +([\x21-\x7e]+) *$/i;

/**
 * The one place where a route's declared access (routes.ts) is enforced, for every route that needs a key:
 * 401 for a missing, unknown, revoked or expired key; 429 for a wrong key from a client address (or for a key
 * prefix) over its wrong keys; 403 for
 * a key whose scope is too small (the message names the scope needed); then the project's request rate.
 * Another project's resources answer 404 further on, as resources that do not exist
 * (docs/architecture.md, "Scopes are enforced in one place").
 */
export interface RouteAccessGuard {
  /** The caller's project and key, allowed to call `req.method` on `route`; throws the refusal otherwise. */
  authorize(req: NeutralRequest, route: MatchedRoute): Promise<AuthContext>;
}

/** What the guard needs besides the engine. */
export interface RouteAccessSettings {
  /** Wrong keys per client address, or `null` for no limit. */
  failures: AuthFailureLimit | null;
  /** The per-project request rate limit, or `null` when there is none. */
  limiter: RequestRateLimiter | null;
}

export function createRouteAccess(mailroom: Mailroom, settings: RouteAccessSettings): RouteAccessGuard {
  const { failures, limiter } = settings;
  return {
    async authorize(req, route) {
      const needed = route.access[req.method];
      // A method a route does not declare is answered 405 before any handler runs; refuse, never allow.
      if (needed === undefined) throw new MailroomError('FORBIDDEN', `${req.method} is not allowed here`);
      const header = req.headers.authorization;
      const secret = header === undefined ? null : (BEARER.exec(header.trim())?.[1] ?? null);
      // Missing and malformed secrets go through the engine too, so all 401s share one body. No header
      // at all is not a guess: not counted. A valid key is served even from an address over its failures.
      const auth: AuthContext =
        header === undefined || failures === null
          ? await mailroom.authenticate(secret)
          : await failures.guard(req.ip ?? 'unknown', secret, () => mailroom.authenticate(secret));
      if (secret === null) throw new MailroomError('UNAUTHORIZED', 'Missing or malformed project secret');
      if (needed !== 'public') requireScope(auth, needed);
      limiter?.take(auth.project.id);
      return auth;
    },
  };
}

/** The 403 of a scope too small: its message names the scope needed and may be shown as it is. */
class ScopeRefusal extends MailroomError {}

/** Whether `error` is a scope refusal of {@link requireScope}. */
export function isScopeRefusal(error: unknown): error is MailroomError {
  return error instanceof ScopeRefusal;
}

/**
 * Refuses (403 `FORBIDDEN`, naming the scope needed) a caller whose key's scope does not cover `needed`.
 * An `AuthContext` without a key acts for the project with every right (an in-process caller). The
 * dashboard's key actions call it too, so the rule is written once.
 */
export function requireScope(auth: AuthContext, needed: KeyScope): void {
  const held = auth.key?.scope ?? 'full';
  if (scopeAllows(held, needed)) return;
  throw new ScopeRefusal(
    'FORBIDDEN',
    `This route needs a key of scope \`${needed}\`; this key's scope is \`${held}\``,
  );
}
