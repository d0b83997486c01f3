import { randomUUID } from 'node:crypto';
import type { Logger, Mailroom } from '@mailroom/core';
import { isMailroomError, isStoreOutage, MailroomError } from '@mailroom/core';
import { createDashboard } from '../dashboard/dashboard.js';
import { resolveDashboardOptions } from '../dashboard/dashboard-options.js';
import { createAuthFailureLimit } from '../limits/auth-failure-limit.js';
import { createClientAddress } from '../limits/client-address.js';
import { createRequestRateLimiter, type RequestRateLimiter } from '../limits/request-rate-limit.js';
import { createHttpMetrics } from '../metrics/metrics.js';
import { routeNotFound } from '../neutral/http-errors.js';
import { errorResponse, methodNotAllowedResponse } from '../neutral/responses.js';
import type { NeutralRequest, NeutralResponse } from '../neutral/types.js';
import { createRouteAccess } from '../routes/route-access.js';
import { createRouteTable, routeHandler } from '../routes/route-table.js';
import { matchRoute } from '../routes/routes.js';
import type { HttpOptions, MailroomHttpHandler } from './http-options.js';
import { pickRequestId } from './request-id.js';

/** Default body limit: 10 MB, room for a few base64 attachments. */
export const DEFAULT_BODY_LIMIT = 10 * 1024 * 1024;

const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

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
  const clientAddress = createClientAddress(options.trustProxy);
  const failures =
    options.authFailureLimit === false ? null : createAuthFailureLimit(options.authFailureLimit);
  const dashboardOptions = resolveDashboardOptions(options.dashboard);
  const dashboard = dashboardOptions
    ? createDashboard(mailroom, dashboardOptions, logger, failures)
    : undefined;
  const metrics = options.metrics ? createHttpMetrics(mailroom, options.metrics) : undefined;

  /** The dashboard and `/metrics`: whole subtrees with their own answers, outside the API's route table. */
  const mounted = (path: string) => {
    if (dashboard?.owns(path)) return { name: 'dashboard', serve: dashboard.handle };
    if (metrics && path === metrics.path) return { name: 'metrics', serve: metrics.serve };
    return undefined;
  };

  const fail = (req: NeutralRequest, requestId: string, error: unknown): NeutralResponse => {
    if (isMailroomError(error) && error.status < 500) return errorResponse(requestId, error);
    // The engine logs an outage once, when it starts and when it ends; not once per request.
    if (isStoreOutage(error)) return errorResponse(requestId, error);
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

  const access = createRouteAccess(mailroom, { failures, limiter });
  const routes = createRouteTable(mailroom, {
    bodyLimit,
    access,
    ...(options.signupRateLimit ? { signupRateLimit: options.signupRateLimit } : {}),
  });

  const handle = async (received: NeutralRequest): Promise<NeutralResponse> => {
    const started = performance.now();
    // From here on `ip` is the client's: the peer, or what a trusted proxy forwarded.
    const ip = clientAddress(received);
    const req: NeutralRequest = ip === received.ip ? received : { ...received, ip };
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
        // A name without a handler is a route that does not exist: 404, never another route's answer.
        const serve = route && routeHandler(routes, route.name);
        if (!(route && serve)) throw routeNotFound();
        routeName = route.name;
        res = route.allow.includes(req.method)
          ? await serve(req, requestId, route)
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

/** An error as it may be logged: name, code, message and stack, and the same for its causes. */
function describeError(error: unknown, depth = 0): unknown {
  if (!(error instanceof Error)) return { value: String(error) };
  const described: Record<string, unknown> = { name: error.name, message: error.message, stack: error.stack };
  if (isMailroomError(error)) described.code = error.code;
  if (error.cause !== undefined && depth < 3) described.cause = describeError(error.cause, depth + 1);
  return described;
}
