import { isMailroomError, type Mailroom, MailroomError } from '@mailroom/core';
import type { SignupRateLimiter } from '../limits/signup-rate-limit.js';
import { malformedJson, payloadTooLarge } from '../neutral/http-errors.js';
import { successResponse } from '../neutral/responses.js';
import type { NeutralRequest, NeutralResponse } from '../neutral/types.js';
import { confirmationPage, invalidLinkPage, resentPage, thanksPage } from '../pages/contact/signup-pages.js';
import type { MatchedRoute } from './routes.js';

/** What the public signup routes need besides the engine. */
export interface SignupRouteSettings {
  /** Bytes a signup body may hold. */
  bodyLimit: number;
  limiter: SignupRateLimiter;
}

type Handler = (req: NeutralRequest, requestId: string, route: MatchedRoute) => Promise<NeutralResponse>;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The public routes of signup forms (issue 38), no project key:
 * - `POST /subscribe/:formRef` (JSON or form-encoded; `OPTIONS` answers a browser's CORS preflight):
 *   rate limited per client address and per signed-up address, a post from an origin the form does not
 *   allow is 403, and the answer is one and the same for every address (JSON, or a thanks page for a
 *   plain HTML form post).
 * - `GET /confirm/:token` shows the confirmation button and changes nothing; `POST` confirms;
 *   `POST /confirm/:token/resend` mails a new link (for an expired one).
 */
export function createSignupRoutes(mailroom: Mailroom, settings: SignupRouteSettings) {
  const { bodyLimit, limiter } = settings;

  /** The CORS headers of an allowed origin, or undefined when the request's origin is not allowed. */
  async function corsOf(req: NeutralRequest, formRef: string): Promise<Record<string, string> | undefined> {
    const origin = req.headers.origin;
    // No Origin: a server-side post (or an old browser's same-origin form); nothing to allow.
    if (origin === undefined) return {};
    const allowed = await mailroom.signups.allowedOrigins(formRef);
    if (!allowed.includes(origin)) return undefined;
    return { 'access-control-allow-origin': origin, vary: 'Origin' };
  }

  const subscribe: Handler = async (req, requestId, route) => {
    const formRef = route.params?.formRef ?? '';
    if (req.method === 'OPTIONS') {
      const cors = (await corsOf(req, formRef)) ?? {};
      const preflight =
        'access-control-allow-origin' in cors
          ? {
              ...cors,
              'access-control-allow-methods': 'POST',
              'access-control-allow-headers': 'content-type',
              'access-control-max-age': '600',
            }
          : {};
      return { status: 204, headers: { ...preflight, 'x-request-id': requestId }, body: '' };
    }
    // The cheapest refusal first: a flood from one client costs a map lookup per request.
    limiter.takeIp(req.ip ?? 'unknown');
    checkBodySize(req, bodyLimit);
    const cors = await corsOf(req, formRef);
    if (!cors) throw new MailroomError('FORBIDDEN', 'This form does not take posts from that origin');
    const { body, html } = readBody(req);
    const email = (body as { email?: unknown } | null)?.email;
    if (typeof email === 'string') limiter.takeAddress(email);
    await mailroom.signups.submit(formRef, body, {
      ip: req.ip ?? null,
      userAgent: req.headers['user-agent'] ?? null,
    });
    const res = html
      ? thanksPage(requestId, await mailroom.signups.brand(formRef), req.headers['accept-language'])
      : successResponse(requestId, 'Signup received', { received: true });
    return { ...res, headers: { ...res.headers, ...cors } };
  };

  /** A person reads these in a browser: refusals as a page; faults go the usual way (logged, JSON 500). */
  const page =
    (serve: (token: string, req: NeutralRequest, requestId: string) => Promise<NeutralResponse>): Handler =>
    async (req, requestId, route) => {
      checkBodySize(req, bodyLimit);
      try {
        return await serve(route.params?.token ?? '', req, requestId);
      } catch (error) {
        if (isMailroomError(error) && error.status < 500)
          return invalidLinkPage(requestId, error, req.headers['accept-language']);
        throw error;
      }
    };

  const meta = (req: NeutralRequest) => ({
    ip: req.ip ?? null,
    userAgent: req.headers['user-agent'] ?? null,
  });

  return {
    subscribe,
    confirm: page(async (token, req, requestId) => {
      // GET and HEAD only show the page: a link scanner that opens the link confirms nothing.
      const target =
        req.method === 'POST'
          ? await mailroom.signups.confirm(token, meta(req))
          : await mailroom.signups.resolve(token);
      return confirmationPage(requestId, target, token);
    }),
    'confirm-resend': page(async (token, _req, requestId) =>
      resentPage(requestId, await mailroom.signups.resend(token)),
    ),
  };
}

function checkBodySize(req: NeutralRequest, limit: number): void {
  const declared = Number(req.headers['content-length']);
  if ((Number.isFinite(declared) && declared > limit) || (req.body?.byteLength ?? 0) > limit) {
    throw payloadTooLarge(limit);
  }
}

/** A signup body: JSON, or the fields of a form post (`html`: answer with a page). */
function readBody(req: NeutralRequest): { body: unknown; html: boolean } {
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  let text: string;
  try {
    text = utf8.decode(req.body ?? new Uint8Array());
  } catch {
    throw malformedJson();
  }
  if (mediaType === 'application/x-www-form-urlencoded') {
    return { body: Object.fromEntries(new URLSearchParams(text)), html: true };
  }
  if (mediaType !== 'application/json') {
    throw new MailroomError(
      'UNSUPPORTED_MEDIA_TYPE',
      'Content-Type must be application/json or application/x-www-form-urlencoded',
    );
  }
  try {
    return { body: JSON.parse(text), html: false };
  } catch {
    throw malformedJson();
  }
}
