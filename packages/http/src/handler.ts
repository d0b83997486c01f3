import { randomUUID } from 'node:crypto';
import type { AuthContext, Logger, Mailroom, RequestOptions } from '@mailroom/core';
import { isMailroomError, MailroomError } from '@mailroom/core';
import { createDashboard } from './dashboard/dashboard.js';
import { resolveDashboardOptions } from './dashboard/dashboard-options.js';
import { EVENT_ROUTES, serveEventRoute } from './event-routes.js';
import { malformedJson, payloadTooLarge, routeNotFound, unsupportedMediaType } from './http-errors.js';
import { createHttpMetrics } from './metrics.js';
import { buildOpenApiDocument } from './openapi.js';
import { pickRequestId } from './request-id.js';
import { createRequestRateLimiter, type RequestRateLimiter } from './request-rate-limit.js';
import { errorResponse, jsonResponse, methodNotAllowedResponse, successResponse } from './responses.js';
import { matchRoute, type RouteMatch } from './routes.js';
import { trackClickResponse, trackOpenResponse } from './tracking-routes.js';
import type { HttpOptions, MailroomHttpHandler, NeutralRequest, NeutralResponse } from './types.js';
import { confirmPage, donePage, errorPage } from './unsubscribe-page.js';

/** Default body limit: 10 MB, room for a few base64 attachments. */
export const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024;

const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** `Bearer <token>`, the scheme case-insensitive (RFC 7235); anything else is malformed. */
const BEARER = /^bearer +([\x21-\x7e]+) *$/i;

/**
 * The HTTP layer written once: routes a neutral request to the engine and turns the outcome into the
 * response shapes of wire-compat.md. The Express and Fastify binders only translate to and from it.
 *
 * @example
 * const handle = createHandler(mailroom, { rateLimit: { perProjectPerSecond: 20 } });
 * const res = await handle({ method: 'POST', path: '/send/mail', headers, body });
 */
export function createHandler(mailroom: Mailroom, options: HttpOptions = {}): MailroomHttpHandler {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  if (!(Number.isSafeInteger(bodyLimit) && bodyLimit >= 0)) {
    throw new MailroomError('VALIDATION_FAILED', 'bodyLimit must be a non-negative integer', {
      source: '@mailroom/http',
    });
  }
  const logger = options.logger ?? silentLogger;
  const generateId = options.requestId ?? randomUUID;
  const limiter: RequestRateLimiter | null = options.rateLimit
    ? createRequestRateLimiter(options.rateLimit)
    : null;
  const serveOpenApi = options.openapi ?? true;
  // Generated on first request per mount point: the zod conversion is not free and often never needed.
  const openApiBodies = new Map<string, string>();
  const dashboardOptions = resolveDashboardOptions(options.dashboard);
  const dashboard = dashboardOptions ? createDashboard(mailroom, dashboardOptions, logger) : undefined;
  const metrics = options.metrics ? createHttpMetrics(mailroom, options.metrics) : undefined;

  /** The dashboard and `/metrics`: whole subtrees with their own answers, outside the API's route table. */
  const mounted = (path: string) => {
    if (dashboard?.owns(path)) return { name: 'dashboard', serve: dashboard.handle };
    if (metrics && path === metrics.path) return { name: 'metrics', serve: metrics.serve };
    return undefined;
  };

  const fail = (req: NeutralRequest, requestId: string, error: unknown): NeutralResponse => {
    if (isMailroomError(error) && error.status < 500) return errorResponse(requestId, error);
    // Only what identifies the fault: never headers (the secret) nor the body.
    logger.error(
      { requestId, method: req.method, path: req.path, ip: req.ip, err: describeError(error) },
      'mailroom http: request failed',
    );
    return errorResponse(
      requestId,
      isMailroomError(error) ? error : new MailroomError('INTERNAL', 'Unexpected fault', { cause: error }),
    );
  };

  const authenticate = async (header: string | undefined): Promise<AuthContext> => {
    const secret = header === undefined ? null : (BEARER.exec(header.trim())?.[1] ?? null);
    // Missing and malformed secrets go through the engine too, so all three 401s share one body.
    const auth = await mailroom.authenticate(secret);
    if (secret === null) throw new MailroomError('UNAUTHORIZED', 'Missing or malformed project secret');
    return auth;
  };

  /**
   * `/unsubscribe/:token`: no secret, no cookies, any body (mail clients POST `List-Unsubscribe=One-Click`
   * form-encoded or as multipart; it is not read). GET and HEAD only show the page; POST unsubscribes.
   */
  const unsubscribe = async (
    req: NeutralRequest,
    requestId: string,
    token: string,
  ): Promise<NeutralResponse> => {
    checkBodySize(req, bodyLimit);
    try {
      if (req.method === 'POST') return donePage(requestId, await mailroom.unsubscribe(token));
      return confirmPage(requestId, await mailroom.resolveUnsubscribe(token), token);
    } catch (error) {
      // A person reads these in a browser: refusals as a page; faults go the usual way (logged, JSON 500).
      if (isMailroomError(error) && error.status < 500) return errorPage(requestId, error);
      throw error;
    }
  };

  const dispatch = async (
    req: NeutralRequest,
    requestId: string,
    match: RouteMatch,
  ): Promise<NeutralResponse> => {
    const route = match.name;
    if (route === 'unsubscribe') return unsubscribe(req, requestId, match.params?.token ?? '');
    if (route === 'track-click')
      return trackClickResponse(mailroom, req, requestId, match.params?.token ?? '');
    if (route === 'track-open') return trackOpenResponse(mailroom, req, requestId, match.params?.token ?? '');
    if (route === 'openapi') {
      const base = req.base ?? '';
      let body = openApiBodies.get(base);
      if (body === undefined) {
        body = JSON.stringify(buildOpenApiDocument(base));
        openApiBodies.set(base, body);
      }
      return { ...jsonResponse(200, requestId, null, { 'cache-control': 'public, max-age=300' }), body };
    }
    checkBodySize(req, bodyLimit);
    if (route === 'inbound-ses' || route === 'inbound-mailgun') {
      // SNS posts JSON as text/plain: the body is read as JSON whatever its type; the signature decides.
      let body: unknown;
      try {
        body = parseJson(req.body);
      } catch {
        throw new MailroomError('UNAUTHORIZED', 'Not a signed notification');
      }
      const receipt = await mailroom.inbound.notification(route === 'inbound-ses' ? 'ses' : 'mailgun', body);
      return jsonResponse(200, requestId, {
        outcome: receipt.outcome,
        ...(receipt.reason ? { reason: receipt.reason } : {}),
      });
    }
    if (EVENT_ROUTES.has(route)) {
      const auth = await authenticate(req.headers.authorization);
      limiter?.take(auth.project.id);
      return serveEventRoute(mailroom, auth, match, req, requestId, () => {
        checkContentType(req.headers['content-type']);
        return parseJson(req.body);
      });
    }
    if (route === 'cancel') {
      // Nothing to say but the ref in the path: any body (or none) is ignored.
      const auth = await authenticate(req.headers.authorization);
      limiter?.take(auth.project.id);
      const view = await mailroom.cancel(auth, match.params?.ref ?? '');
      return broadcastResponse(requestId, 'Broadcast cancelled', view);
    }
    checkContentType(req.headers['content-type']);
    const auth = await authenticate(req.headers.authorization);
    limiter?.take(auth.project.id);
    const payload = parseJson(req.body);
    if (route === 'reschedule') {
      const scheduleFor =
        typeof payload === 'object' && payload !== null
          ? (payload as { scheduleFor?: unknown }).scheduleFor
          : undefined;
      // The engine refuses anything but an ISO-8601 date-time string with a zone.
      const view = await mailroom.reschedule(auth, match.params?.ref ?? '', scheduleFor as string);
      return broadcastResponse(requestId, 'Broadcast rescheduled', view);
    }
    const options = requestOptions(req);
    if (route === 'send') {
      const result = await mailroom.send(auth, payload, options);
      return replayed(
        successResponse(requestId, 'Message accepted', { ref: result.ref, status: result.status }),
        result.replayed,
      );
    }
    const result = await mailroom.broadcast(auth, payload, options);
    return replayed(
      successResponse(requestId, result.batch.seq > 1 ? 'Broadcast batch accepted' : 'Broadcast accepted', {
        broadcast: { ref: result.ref, status: result.status },
        broadcastRef: result.ref,
        batch: result.batch,
      }),
      result.replayed,
    );
  };

  const handle = async (req: NeutralRequest): Promise<NeutralResponse> => {
    const started = performance.now();
    const requestId = pickRequestId(req.headers['x-request-id'], generateId);
    let res: NeutralResponse;
    let routeName = 'unmatched';
    try {
      const own = mounted(req.path);
      if (own) {
        routeName = own.name;
        res = await own.serve(req, requestId);
      } else {
        const route = matchRoute(req.path, serveOpenApi);
        if (!route) throw routeNotFound();
        routeName = route.name;
        res = route.allow.includes(req.method)
          ? await dispatch(req, requestId, route)
          : methodNotAllowedResponse(requestId, req.method, route.allow);
      }
    } catch (error) {
      res = fail(req, requestId, error);
    }
    const seconds = (performance.now() - started) / 1000;
    metrics?.observeRequest(routeName, req.method, res.status, seconds);
    logger.debug(
      {
        requestId,
        method: req.method,
        path: req.path,
        route: routeName,
        status: res.status,
        ms: Math.round(seconds * 1000),
      },
      'mailroom http: request',
    );
    return res;
  };

  return Object.assign(handle, {
    bodyLimit,
    fail: (req: NeutralRequest, error: unknown) =>
      fail(req, pickRequestId(req.headers['x-request-id'], generateId), error),
  });
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

/** An error as it may be logged: name, code, message and stack, and the same for its causes. */
function describeError(error: unknown, depth = 0): unknown {
  if (!(error instanceof Error)) return { value: String(error) };
  const described: Record<string, unknown> = { name: error.name, message: error.message, stack: error.stack };
  if (isMailroomError(error)) described.code = error.code;
  if (error.cause !== undefined && depth < 3) described.cause = describeError(error.cause, depth + 1);
  return described;
}
