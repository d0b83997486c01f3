import type { AuthContext } from '@mailroom/core';
import { isMailroomError, MailroomError } from '@mailroom/core';
import type { AuthFailureLimit } from '../../limits/auth-failure-limit.js';
import type { NeutralRequest, NeutralResponse } from '../../neutral/types.js';
import { isScopeRefusal, requireScope } from '../../routes/route-access.js';
import { type AreaDeps, allow, type Call, GET, POST, page } from '../dashboard-call.js';
import {
  checkSameOrigin,
  htmlPage,
  isHttps,
  readCookie,
  readForm,
  redirect,
  SESSION_COOKIE,
  sessionCookie,
} from '../dashboard-http.js';
import type { ResolvedDashboardOptions } from '../dashboard-options.js';
import { signInPage } from '../pages/sign-in-page.js';
import { createSessionStore, type DashboardSession, isCsrfToken } from '../session-store.js';

/** The sign-in and sign-out pages, and the session that every other page is answered in. */
export interface SessionRoutes {
  /** Answers the paths open without a session (the root, `sign-in`, `sign-out`); `undefined` for the others. */
  open(call: Call): Promise<NeutralResponse> | undefined;
  /**
   * The project signed in for `call`, with its page context set and, on a POST, the form's origin, token
   * and scope checked; without a session, the redirect to sign in (a script's call: `UNAUTHORIZED`).
   */
  signedIn(call: Call): Promise<{ auth: AuthContext } | { answer: NeutralResponse }>;
}

/**
 * The session cookie holds a random id only; every form that changes something carries the session's
 * CSRF token and must come from the dashboard's own origin.
 */
export function createSessionRoutes(
  { mailroom, logger }: Pick<AreaDeps, 'mailroom' | 'logger'>,
  options: ResolvedDashboardOptions,
  failures: AuthFailureLimit | null,
): SessionRoutes {
  const sessions = createSessionStore({ ttlMs: options.sessionTtlMs, maxSessions: options.maxSessions });

  function open(call: Call): Promise<NeutralResponse> | undefined {
    const { segments, method, req } = call;
    const [first] = segments;
    if (segments.length === 0) {
      allow(call, GET);
      return Promise.resolve(
        redirect(call.requestId, `${call.root}/${currentSession(req) ? 'broadcasts' : 'sign-in'}`),
      );
    }
    if (first === 'sign-in' && segments.length === 1) {
      allow(call, [...GET, ...POST]);
      return method === 'POST'
        ? signIn(call)
        : Promise.resolve(page(call, 200, signInPage(call.nonce, call.root)));
    }
    if (first === 'sign-out' && segments.length === 1) {
      allow(call, POST);
      return Promise.resolve(signOut(call));
    }
    return undefined;
  }

  async function signedIn(call: Call): Promise<{ auth: AuthContext } | { answer: NeutralResponse }> {
    const { method, req } = call;
    const action = call.segments[2];
    call.machine = action === 'progress.json' || action === 'preview';
    let session = currentSession(req);
    if (session && !(await keyStillWorks(session.auth))) {
      // Signed in with a key since revoked or expired: the session ends with it.
      sessions.delete(readCookie(req, SESSION_COOKIE));
      session = undefined;
    }
    if (!session) {
      if (call.machine) throw new MailroomError('UNAUTHORIZED', 'Not signed in');
      return { answer: redirect(call.requestId, `${call.root}/sign-in`) };
    }
    call.ctx = {
      root: call.root,
      projectName: session.auth.project.name,
      csrfToken: session.csrfToken,
      nonce: call.nonce,
    };
    const auth = session.auth;
    if (method === 'POST') {
      checkForm(req, session);
      // Every form changes something: the API's rule for changes (a `full` key), from the one place it is written.
      requireScope(auth, 'full');
    }
    return { auth };
  }

  /** Whether the key a session signed in with still authenticates (one read by id; no key: an in-process caller). */
  async function keyStillWorks(auth: AuthContext): Promise<boolean> {
    if (!auth.key) return true;
    const key = await mailroom.store.getKey(auth.project.id, auth.key.id);
    return !!key && !key.revokedAt && !(key.expiresAt && key.expiresAt.getTime() <= Date.now());
  }

  function currentSession(req: NeutralRequest): DashboardSession | undefined {
    return sessions.get(readCookie(req, SESSION_COOKIE));
  }

  /** A form that changes something: from this origin, with this session's token. */
  function checkForm(req: NeutralRequest, session: DashboardSession): void {
    checkSameOrigin(req);
    if (!isCsrfToken(session, readForm(req).get('_csrf'))) {
      throw new MailroomError('FORBIDDEN', 'The form does not carry this session’s token');
    }
  }

  async function signIn(call: Call): Promise<NeutralResponse> {
    const { req } = call;
    checkSameOrigin(req);
    const secret = readForm(req).get('secret')?.trim() ?? '';
    let auth: AuthContext;
    try {
      // The API's limit of wrong keys, counted together: a guesser gains nothing by switching to the form.
      auth = failures
        ? await failures.guard(req.ip ?? 'unknown', secret, () => mailroom.authenticate(secret))
        : await mailroom.authenticate(secret);
    } catch (error) {
      if (isMailroomError(error, 'RATE_LIMITED')) {
        logger.warn({ requestId: call.requestId, ip: req.ip }, 'mailroom dashboard: sign-in limited');
        return htmlPage(
          error.status,
          call.requestId,
          call.nonce,
          signInPage(call.nonce, call.root, 'Too many wrong secrets from here: wait a minute and retry.'),
          { 'retry-after': String(error.retryAfter ?? 60) },
        );
      }
      if (!isMailroomError(error, 'UNAUTHORIZED')) throw error;
      logger.warn({ requestId: call.requestId, ip: req.ip }, 'mailroom dashboard: sign-in refused');
      return page(
        call,
        error.status,
        signInPage(call.nonce, call.root, 'That is not a valid project secret.'),
      );
    }
    try {
      // The dashboard shows the project's reads: a `sending` key may not sign in.
      requireScope(auth, 'read');
    } catch (error) {
      if (!isScopeRefusal(error)) throw error;
      return page(
        call,
        error.status,
        signInPage(call.nonce, call.root, 'A sending key cannot sign in: use a full or read key.'),
      );
    }
    // A fresh id on every sign-in: a cookie planted before it (session fixation) is worth nothing after.
    sessions.delete(readCookie(req, SESSION_COOKIE));
    const { id } = sessions.create(auth);
    logger.info(
      { requestId: call.requestId, projectId: auth.project.id, ip: req.ip },
      'mailroom dashboard: signed in',
    );
    return redirect(call.requestId, `${call.root}/broadcasts`, {
      'set-cookie': sessionCookie(id, cookiePath(call), secureCookie(req)),
    });
  }

  function signOut(call: Call): NeutralResponse {
    const { req } = call;
    const id = readCookie(req, SESSION_COOKIE);
    const session = sessions.get(id);
    if (session) checkForm(req, session);
    sessions.delete(id);
    return redirect(call.requestId, `${call.root}/sign-in`, {
      'set-cookie': sessionCookie('', cookiePath(call), secureCookie(req), 0),
    });
  }

  function cookiePath(call: Call): string {
    return call.root === '' ? '/' : call.root;
  }

  function secureCookie(req: NeutralRequest): boolean {
    return options.secureCookie === 'auto' ? isHttps(req) : options.secureCookie;
  }

  return { open, signedIn };
}
