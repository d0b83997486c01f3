import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AuthContext } from '@mailroom/core';

/** A signed-in dashboard user: the project they proved they hold a secret of. */
export interface DashboardSession {
  auth: AuthContext;
  /** The token every POST of this session must carry (CSRF). */
  csrfToken: string;
  /** `Date.now()` after which the session is over. */
  expiresAt: number;
}

/** Sessions of one dashboard, in this process's memory. */
export interface SessionStore {
  /** A new session; returns the cookie value (random, unrelated to the secret). */
  create(auth: AuthContext): { id: string; session: DashboardSession };
  /** The live session of a cookie value, if any. */
  get(id: string | undefined): DashboardSession | undefined;
  /** Ends a session (sign-out). */
  delete(id: string | undefined): void;
}

/**
 * Sessions keyed by the SHA-256 of a random 256-bit cookie value: the cookie carries no secret and no
 * project id, signing out really ends the session, and a memory dump shows no usable cookie. Expired
 * sessions are dropped when met and swept on creation; past `maxSessions` the oldest goes first.
 */
export function createSessionStore(options: { ttlMs: number; maxSessions: number }): SessionStore {
  const sessions = new Map<string, DashboardSession>();
  const keyOf = (id: string) => createHash('sha256').update(id).digest('base64url');

  function sweep(now: number): void {
    for (const [key, session] of sessions) if (session.expiresAt <= now) sessions.delete(key);
    while (sessions.size >= options.maxSessions) {
      const oldest = sessions.keys().next().value;
      if (oldest === undefined) break;
      sessions.delete(oldest);
    }
  }

  return {
    create(auth) {
      const now = Date.now();
      sweep(now);
      const id = randomBytes(32).toString('base64url');
      const session: DashboardSession = {
        auth,
        csrfToken: randomBytes(32).toString('base64url'),
        expiresAt: now + options.ttlMs,
      };
      sessions.set(keyOf(id), session);
      return { id, session };
    },
    get(id) {
      if (!id || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
      const key = keyOf(id);
      const session = sessions.get(key);
      if (!session) return undefined;
      if (session.expiresAt <= Date.now()) {
        sessions.delete(key);
        return undefined;
      }
      return session;
    },
    delete(id) {
      if (id) sessions.delete(keyOf(id));
    },
  };
}

/** Whether `given` is the session's CSRF token, compared in constant time. */
export function isCsrfToken(session: DashboardSession, given: string | null | undefined): boolean {
  if (!given) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(session.csrfToken).digest();
  return timingSafeEqual(a, b);
}
