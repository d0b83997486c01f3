import type { AuthContext, Mailroom, RequestOptions } from '@mailroom/core';
import { isMailroomError, MailroomError, REQUEST_BODY_LIMITS } from '@mailroom/core';
import { createSignupRateLimiter, type SignupRateLimitOptions } from '../limits/signup-rate-limit.js';
import { malformedJson, payloadTooLarge, unsupportedMediaType } from '../neutral/http-errors.js';
import { jsonResponse, successResponse } from '../neutral/responses.js';
import type { NeutralRequest, NeutralResponse } from '../neutral/types.js';
import { buildOpenApiDocument } from '../openapi/openapi.js';
import { confirmPage, donePage, refusedLinkPage } from '../pages/unsubscribe-page.js';
import { AUDIENCE_ROUTES } from './audience-routes.js';
import { AUTOMATION_ROUTES } from './automation-routes.js';
import { DOMAIN_ROUTES } from './domain-routes.js';
import { EVENT_ROUTES, type ProjectCall } from './event-routes.js';
import { FORM_ROUTES } from './form-routes.js';
import { KEY_ROUTES } from './key-routes.js';
import { PAUSE_ROUTES } from './pause-routes.js';
import { preferencesRoute } from './preference-routes.js';
import { inboundAttachmentResponse, RECEIVING_ROUTES } from './receiving-routes.js';
import { RESOURCE_ROUTES } from './resource-routes.js';
import type { RouteAccessGuard } from './route-access.js';
import type { MatchedRoute, RouteName } from './routes.js';
import { createSignupRoutes } from './signup-routes.js';
import { TOPIC_ROUTES } from './topic-routes.js';
import { trackClickResponse, trackOpenResponse } from './tracking-routes.js';

/** Serves one matched route (its method already allowed); a refusal is thrown as a `MailroomError`. */
export type RouteHandler = (
  req: NeutralRequest,
  requestId: string,
  route: MatchedRoute,
) => Promise<NeutralResponse>;

/**
 * One handler per route name: a name added to `RouteName` without its handler here is a compile error,
 * never a request served by another route's handler.
 */
export type RouteTable = Readonly<Record<RouteName, RouteHandler>>;

/** What the route handlers share besides the engine. */
export interface RouteTableSettings {
  /** Bytes a request body may hold; a larger one is refused with 413 before it is parsed. */
  bodyLimit: number;
  /** Authenticates the key and enforces the route's declared access (route-access.ts), for every keyed route. */
  access: RouteAccessGuard;
  /** The limits of the public signup endpoint. */
  signupRateLimit?: SignupRateLimitOptions;
}

/** The routes of wire-compat.md, each turning a request into the engine's call and its answer. */
export function createRouteTable(mailroom: Mailroom, settings: RouteTableSettings): RouteTable {
  const { bodyLimit, access } = settings;
  // The send endpoints carry inline attachments and take the whole bodyLimit; every other route's body is
  // small, so it gets the smaller cap of REQUEST_BODY_LIMITS (core's field-limits.ts).
  const smallLimit = Math.min(bodyLimit, REQUEST_BODY_LIMITS.other);
  const templateLimit = Math.min(bodyLimit, REQUEST_BODY_LIMITS.template);
  const signups = createSignupRoutes(mailroom, {
    bodyLimit: smallLimit,
    limiter: createSignupRateLimiter(settings.signupRateLimit),
  });
  // Generated on first request per mount point: the zod conversion is not free and often never needed.
  const openApiBodies = new Map<string, string>();

  /** A call with a JSON body: size and media type are refused before the secret is checked, the body parsed after. */
  const jsonCall = async (
    req: NeutralRequest,
    route: MatchedRoute,
    limit: number,
  ): Promise<{ auth: AuthContext; payload: unknown }> => {
    checkBodySize(req, limit);
    checkContentType(req.headers['content-type']);
    const auth = await access.authorize(req, route);
    return { auth, payload: parseJson(req.body) };
  };

  /** An event, webhook or domain route: the project's secret; the body is read only by the routes that take one. */
  const projectRoute =
    (serve: (call: ProjectCall) => Promise<NeutralResponse>, limit = smallLimit): RouteHandler =>
    async (req, requestId, route) => {
      checkBodySize(req, limit);
      const auth = await access.authorize(req, route);
      const readJson = (): unknown => {
        checkContentType(req.headers['content-type']);
        return parseJson(req.body);
      };
      return serve({ mailroom, auth, req, requestId, params: route.params ?? {}, readJson });
    };

  /** A provider's signed notification of bounces and complaints: no project secret. */
  const inbound =
    (provider: 'ses' | 'mailgun'): RouteHandler =>
    async (req, requestId) => {
      checkBodySize(req, smallLimit);
      // SNS posts JSON as text/plain: the body is read as JSON whatever its type; the signature decides.
      let body: unknown;
      try {
        body = parseJson(req.body);
      } catch {
        throw new MailroomError('UNAUTHORIZED', 'Not a signed notification');
      }
      const receipt = await mailroom.inbound.notification(provider, body);
      return jsonResponse(200, requestId, {
        outcome: receipt.outcome,
        ...(receipt.reason ? { reason: receipt.reason } : {}),
      });
    };

  return {
    async send(req, requestId, route) {
      const { auth, payload } = await jsonCall(req, route, bodyLimit);
      const result = await mailroom.send(auth, payload, requestOptions(req));
      return replayed(
        successResponse(requestId, 'Message accepted', { ref: result.ref, status: result.status }),
        result.replayed,
      );
    },

    async 'send-batch'(req, requestId, route) {
      const { auth, payload } = await jsonCall(req, route, bodyLimit);
      const result = await mailroom.sendBatch(auth, payload, requestOptions(req));
      const { replayed: wasReplayed, ...data } = result;
      const message =
        result.refused === 0
          ? `Batch accepted: ${result.accepted} message(s)`
          : `Batch partly accepted: ${result.accepted} message(s), ${result.refused} refused`;
      return replayed(successResponse(requestId, message, data), wasReplayed);
    },

    async broadcast(req, requestId, route) {
      const { auth, payload } = await jsonCall(req, route, bodyLimit);
      const result = await mailroom.broadcast(auth, payload, requestOptions(req));
      return replayed(
        successResponse(requestId, result.batch.seq > 1 ? 'Broadcast batch accepted' : 'Broadcast accepted', {
          broadcast: { ref: result.ref, status: result.status },
          broadcastRef: result.ref,
          batch: result.batch,
        }),
        result.replayed,
      );
    },

    async cancel(req, requestId, route) {
      // Nothing to say but the ref in the path: any body (or none) is ignored.
      checkBodySize(req, smallLimit);
      const auth = await access.authorize(req, route);
      const view = await mailroom.cancel(auth, route.params?.ref ?? '');
      return broadcastResponse(requestId, 'Broadcast cancelled', view);
    },

    async reschedule(req, requestId, route) {
      const { auth, payload } = await jsonCall(req, route, smallLimit);
      const scheduleFor =
        typeof payload === 'object' && payload !== null
          ? (payload as { scheduleFor?: unknown }).scheduleFor
          : undefined;
      // The engine refuses anything but an ISO-8601 date-time string with a zone.
      const view = await mailroom.reschedule(auth, route.params?.ref ?? '', scheduleFor as string);
      return broadcastResponse(requestId, 'Broadcast rescheduled', view);
    },

    async openapi(req, requestId) {
      const base = req.base ?? '';
      let body = openApiBodies.get(base);
      if (body === undefined) {
        body = JSON.stringify(buildOpenApiDocument(base));
        openApiBodies.set(base, body);
      }
      return { ...jsonResponse(200, requestId, null, { 'cache-control': 'public, max-age=300' }), body };
    },

    /**
     * `/unsubscribe/:token`: no secret, no cookies, any body (mail clients POST `List-Unsubscribe=One-Click`
     * form-encoded or as multipart; it is not read). GET and HEAD only show the page; POST unsubscribes: from
     * the message's topic only when it had one, from everything with `?everything=1` (the page's button).
     */
    async unsubscribe(req, requestId, route) {
      checkBodySize(req, smallLimit);
      const token = route.params?.token ?? '';
      try {
        if (req.method === 'POST') {
          // The page's second button asks `?everything=1`; a mail client's one-click POST never does.
          const everything = new URLSearchParams(req.query ?? '').get('everything') === '1';
          const target = await mailroom.unsubscribe(token, {
            everything,
            ip: req.ip ?? null,
            userAgent: req.headers['user-agent'] ?? null,
          });
          return donePage(requestId, target, everything);
        }
        return confirmPage(requestId, await mailroom.resolveUnsubscribe(token), token);
      } catch (error) {
        // A person reads these in a browser: refusals as a page; faults go the usual way (logged, JSON 500).
        if (isMailroomError(error) && error.status < 500) return refusedLinkPage(requestId, error);
        throw error;
      }
    },

    /** `/preferences/:token`: the contact's preference page (preference-routes.ts). */
    async preferences(req, requestId, route) {
      checkBodySize(req, smallLimit);
      return preferencesRoute(mailroom, req, requestId, route.params?.token ?? '');
    },

    'inbound-ses': inbound('ses'),
    'inbound-mailgun': inbound('mailgun'),

    events: projectRoute(EVENT_ROUTES.events),
    webhooks: projectRoute(EVENT_ROUTES.webhooks),
    webhook: projectRoute(EVENT_ROUTES.webhook),
    'webhook-rotate': projectRoute(EVENT_ROUTES['webhook-rotate']),

    domains: projectRoute(DOMAIN_ROUTES.domains),
    domain: projectRoute(DOMAIN_ROUTES.domain),
    'domain-verify': projectRoute(DOMAIN_ROUTES['domain-verify']),
    'domain-rotate': projectRoute(DOMAIN_ROUTES['domain-rotate']),

    keys: projectRoute(KEY_ROUTES.keys),
    key: projectRoute(KEY_ROUTES.key),
    'key-rotate': projectRoute(KEY_ROUTES['key-rotate']),
    templates: projectRoute(RESOURCE_ROUTES.templates, templateLimit),
    template: projectRoute(RESOURCE_ROUTES.template, templateLimit),
    'template-validate': projectRoute(RESOURCE_ROUTES['template-validate'], templateLimit),
    'template-preview': projectRoute(RESOURCE_ROUTES['template-preview'], templateLimit),
    senders: projectRoute(RESOURCE_ROUTES.senders),
    sender: projectRoute(RESOURCE_ROUTES.sender),
    suppressions: projectRoute(RESOURCE_ROUTES.suppressions),
    suppression: projectRoute(RESOURCE_ROUTES.suppression),
    'audience-groups': projectRoute(AUDIENCE_ROUTES['audience-groups']),
    'audience-group': projectRoute(AUDIENCE_ROUTES['audience-group']),
    'audience-members': projectRoute(AUDIENCE_ROUTES['audience-members']),
    'audience-profiles': projectRoute(AUDIENCE_ROUTES['audience-profiles']),
    'audience-profile': projectRoute(AUDIENCE_ROUTES['audience-profile']),
    'audience-imports': projectRoute(AUDIENCE_ROUTES['audience-imports']),
    'audience-import': projectRoute(AUDIENCE_ROUTES['audience-import']),
    'broadcasts-list': projectRoute(AUDIENCE_ROUTES['broadcasts-list']),
    'broadcast-status': projectRoute(AUDIENCE_ROUTES['broadcast-status']),
    'message-status': projectRoute(AUDIENCE_ROUTES['message-status']),
    pauses: projectRoute(PAUSE_ROUTES.pauses),
    'broadcast-pause': projectRoute(PAUSE_ROUTES['broadcast-pause']),
    'broadcast-resume': projectRoute(PAUSE_ROUTES['broadcast-resume']),
    'sending-pause': projectRoute(PAUSE_ROUTES['sending-pause']),
    'sending-resume': projectRoute(PAUSE_ROUTES['sending-resume']),
    'destination-pause': projectRoute(PAUSE_ROUTES['destination-pause']),
    'destination-resume': projectRoute(PAUSE_ROUTES['destination-resume']),
    topics: projectRoute(TOPIC_ROUTES.topics),
    topic: projectRoute(TOPIC_ROUTES.topic),
    'audience-profile-topics': projectRoute(TOPIC_ROUTES['audience-profile-topics']),
    'audience-profile-consent': projectRoute(TOPIC_ROUTES['audience-profile-consent']),
    'project-brand': projectRoute(TOPIC_ROUTES['project-brand']),
    'events-track': projectRoute(AUTOMATION_ROUTES['events-track']),
    automations: projectRoute(AUTOMATION_ROUTES.automations),
    automation: projectRoute(AUTOMATION_ROUTES.automation),
    'automation-pause': projectRoute(AUTOMATION_ROUTES['automation-pause']),
    'automation-resume': projectRoute(AUTOMATION_ROUTES['automation-resume']),
    'automation-runs': projectRoute(AUTOMATION_ROUTES['automation-runs']),
    'automation-stats': projectRoute(AUTOMATION_ROUTES['automation-stats']),

    forms: projectRoute(FORM_ROUTES.forms),
    form: projectRoute(FORM_ROUTES.form),
    subscribe: signups.subscribe,
    confirm: signups.confirm,
    'confirm-resend': signups['confirm-resend'],
    'inbound-routes': projectRoute(RECEIVING_ROUTES['inbound-routes']),
    'inbound-route': projectRoute(RECEIVING_ROUTES['inbound-route']),
    'inbound-messages': projectRoute(RECEIVING_ROUTES['inbound-messages']),
    'inbound-message': projectRoute(RECEIVING_ROUTES['inbound-message']),
    'inbound-settings': projectRoute(RECEIVING_ROUTES['inbound-settings']),
    'inbound-attachment': (_req, requestId, route) =>
      inboundAttachmentResponse(mailroom, requestId, route.params?.token ?? ''),

    'track-click': (req, requestId, route) =>
      trackClickResponse(mailroom, req, requestId, route.params?.token ?? ''),
    'track-open': (req, requestId, route) =>
      trackOpenResponse(mailroom, req, requestId, route.params?.token ?? ''),
  };
}

/**
 * The table's handler for `name`, or `undefined` when it has none: the caller answers 404. Only the
 * table's own keys count, so a name such as `constructor` never reaches an inherited property.
 */
export function routeHandler(table: RouteTable, name: string): RouteHandler | undefined {
  return Object.hasOwn(table, name) ? table[name as RouteName] : undefined;
}

/** The `Idempotency-Key` header as the engine takes it (an empty header is a key, refused as too short). */
function requestOptions(req: NeutralRequest): RequestOptions {
  const key = req.headers['idempotency-key'];
  return key === undefined ? {} : { idempotencyKey: key };
}

/** A replayed answer says so, as the hosted APIs that popularized the header do. */
function replayed(res: NeutralResponse, wasReplayed: boolean | undefined): NeutralResponse {
  if (wasReplayed) res.headers['idempotent-replayed'] = 'true';
  return res;
}

/** The answer of cancel and reschedule: the broadcast envelope, with the delivery counts. */
function broadcastResponse(
  requestId: string,
  message: string,
  view: { ref: string; status: string; scheduleFor: Date | null; counts: object },
): NeutralResponse {
  return successResponse(requestId, message, {
    broadcast: { ref: view.ref, status: view.status, scheduleFor: view.scheduleFor, counts: view.counts },
    broadcastRef: view.ref,
  });
}

/** 413 from the declared length (before any byte is read) or from the bytes the binder collected. */
function checkBodySize(req: NeutralRequest, limit: number): void {
  const declared = Number(req.headers['content-length']);
  if ((Number.isFinite(declared) && declared > limit) || (req.body?.byteLength ?? 0) > limit) {
    throw payloadTooLarge(limit);
  }
}

/** `application/json`, optionally with a UTF-8 charset (JSON is UTF-8 by definition, RFC 8259). */
function checkContentType(header: string | undefined): void {
  const [mediaType = '', ...params] = (header ?? '').split(';');
  if (mediaType.trim().toLowerCase() !== 'application/json') throw unsupportedMediaType();
  for (const param of params) {
    const [key = '', value = ''] = param.split('=');
    if (key.trim().toLowerCase() !== 'charset') continue;
    const charset = value
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') throw unsupportedMediaType();
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseJson(body: Uint8Array | undefined): unknown {
  if (body === undefined || body.byteLength === 0) throw malformedJson();
  try {
    return JSON.parse(utf8.decode(body));
  } catch {
    throw malformedJson();
  }
}
