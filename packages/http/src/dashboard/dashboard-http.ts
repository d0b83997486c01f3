import { randomBytes } from 'node:crypto';
import { MailroomError } from '@mailroom/core';
import type { NeutralRequest, NeutralResponse } from '../neutral/types.js';
import type { SafeHtml } from '../pages/html.js';

/**
 * The HTTP plumbing of the dashboard: response headers (a strict policy with no remote source anywhere),
 * the session cookie, and the parsing of query strings and forms. Pages never set headers themselves.
 */

/** Name of the session cookie. */
export const SESSION_COOKIE = 'mailroom_dashboard';

/** Largest dashboard form accepted: the sign-in form and a few hidden fields. */
export const FORM_LIMIT = 16 * 1024;

const COMMON_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  // Refs and addresses are in the URLs: they must not leak to another site in a Referer. (`no-referrer`
  // would also make the browser send `Origin: null` on our own forms, defeating the origin check.)
  'referrer-policy': 'same-origin',
  'x-robots-tag': 'noindex, nofollow',
  'cross-origin-resource-policy': 'same-origin',
} as const;

/** A fresh nonce for the one inline stylesheet and script of a page. */
export function newNonce(): string {
  return randomBytes(18).toString('base64');
}

/** A dashboard page: framed by nobody, running only its own nonce'd script and style. */
export function htmlPage(
  status: number,
  requestId: string,
  nonce: string,
  body: SafeHtml,
  headers: Record<string, string> = {},
): NeutralResponse {
  return {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      ...COMMON_HEADERS,
      'content-security-policy': [
        "default-src 'none'",
        `script-src 'nonce-${nonce}'`,
        `style-src 'nonce-${nonce}'`,
        "img-src 'self' data:",
        "connect-src 'self'",
        "frame-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
      ].join('; '),
      'x-frame-options': 'DENY',
      'cross-origin-opener-policy': 'same-origin',
      'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
      'x-request-id': requestId,
      ...headers,
    },
    body: `<!doctype html>${body.value}`,
  };
}

/**
 * A message's HTML as the preview frame shows it: sandboxed by the policy itself (no script, no form, a
 * unique origin, so no cookie of ours), with nothing loaded from anywhere (no tracking pixel fires), and
 * framable only by the dashboard.
 */
export function previewDocument(requestId: string, markup: string): NeutralResponse {
  return {
    status: 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      ...COMMON_HEADERS,
      'content-security-policy':
        "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; frame-ancestors 'self'",
      'x-frame-options': 'SAMEORIGIN',
      'x-request-id': requestId,
    },
    body: markup,
  };
}

/** A small JSON answer for the page's own script (live progress). */
export function jsonData(status: number, requestId: string, data: unknown): NeutralResponse {
  return {
    status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      ...COMMON_HEADERS,
      'x-request-id': requestId,
    },
    body: JSON.stringify(data),
  };
}

/** 303 See Other: after a form, the browser GETs `location` (a reload does not post again). */
export function redirect(
  requestId: string,
  location: string,
  headers: Record<string, string> = {},
): NeutralResponse {
  return {
    status: 303,
    headers: {
      'content-type': 'text/plain; charset=utf-8',
      ...COMMON_HEADERS,
      location,
      'x-request-id': requestId,
      ...headers,
    },
    body: '',
  };
}

/** The attributes of the session cookie: only for the dashboard's path, never readable by script or sent cross-site. */
export function sessionCookie(value: string, path: string, secure: boolean, maxAge?: number): string {
  const parts = [`${SESSION_COOKIE}=${value}`, `Path=${path}`, 'HttpOnly', 'SameSite=Strict'];
  if (maxAge !== undefined) parts.push(`Max-Age=${maxAge}`);
  if (secure) parts.push('Secure');
  return parts.join('; ');
}

/** A cookie of the request by name. */
export function readCookie(req: NeutralRequest, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The query string of the request. */
export function queryOf(req: NeutralRequest): URLSearchParams {
  return new URLSearchParams(req.query ?? '');
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The fields of a form post; 413, 415 and 400 as the JSON routes answer them. */
export function readForm(req: NeutralRequest): URLSearchParams {
  const declared = Number(req.headers['content-length']);
  if ((Number.isFinite(declared) && declared > FORM_LIMIT) || (req.body?.byteLength ?? 0) > FORM_LIMIT) {
    throw new MailroomError('PAYLOAD_TOO_LARGE', `A dashboard form is at most ${FORM_LIMIT} bytes`);
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new MailroomError(
      'UNSUPPORTED_MEDIA_TYPE',
      'A dashboard form is application/x-www-form-urlencoded',
    );
  }
  try {
    return new URLSearchParams(req.body ? utf8.decode(req.body) : '');
  } catch {
    throw new MailroomError('VALIDATION_FAILED', 'The form is not valid UTF-8');
  }
}

/**
 * Refuses a form sent from another site (login CSRF included, where no session token exists yet): by
 * `Sec-Fetch-Site` when the browser sends it (a page cannot forge it), else by `Origin` against the host
 * asked for. A request with neither comes from no browser, so it is no cross-site forgery.
 */
export function checkSameOrigin(req: NeutralRequest): void {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) {
    if (site !== 'same-origin' && site !== 'none') throw crossSite();
    return;
  }
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    throw crossSite();
  }
  const expected = [req.headers['x-forwarded-host'], req.headers.host].filter((h) => h !== undefined);
  if (!expected.some((h) => h?.split(',')[0]?.trim().toLowerCase() === host.toLowerCase())) throw crossSite();
}

function crossSite(): MailroomError {
  return new MailroomError('FORBIDDEN', 'This form was not sent from the dashboard');
}

/** Whether the request came over HTTPS, as far as a proxy in front tells. */
export function isHttps(req: NeutralRequest): boolean {
  return req.headers['x-forwarded-proto']?.split(',')[0]?.trim().toLowerCase() === 'https';
}
