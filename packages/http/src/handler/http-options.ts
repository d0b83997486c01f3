import type { Logger } from '@mailroom/core';
import type { DashboardOptions } from '../dashboard/dashboard-options.js';
import type { AuthFailureLimitOptions } from '../limits/auth-failure-limit.js';
import type { RateLimitOptions } from '../limits/request-rate-limit.js';
import type { SignupRateLimitOptions } from '../limits/signup-rate-limit.js';
import type { MetricsOptions } from '../metrics/metrics-options.js';
import type { NeutralRequest, NeutralResponse } from '../neutral/types.js';

/** Options of the HTTP layer, shared by `createHandler` and the Express and Fastify binders. */
export interface HttpOptions {
  /**
   * Largest accepted request body in bytes; a bigger one is refused with 413 before it is parsed.
   * @default 10_485_760 (10 MB)
   */
  bodyLimit?: number;
  /**
   * Where faults (500) and request summaries go. Never given the Authorization header or a body.
   * @default a logger that drops everything
   */
  logger?: Logger;
  /**
   * Makes the id of a request that brings no usable `X-Request-ID`.
   * @default crypto.randomUUID
   */
  requestId?: () => string;
  /**
   * Answer 429 with `Retry-After` when a project goes over this rate.
   * @default no limit
   * @example { perProjectPerSecond: 20 }
   */
  rateLimit?: RateLimitOptions;
  /**
   * Wrong keys per client address and per key prefix (the API's keys and the dashboard's sign-in): past
   * `failures` in a window, that address's (or prefix's) failing attempts get 429 with `Retry-After`, while
   * a valid key is still served, from any address. `false`: no limit.
   * @default { failures: 10, windowSeconds: 60, maxAddresses: 10_000, maxConcurrentChecks: 4 }
   */
  authFailureLimit?: AuthFailureLimitOptions | false;
  /**
   * Addresses or CIDR ranges (`127.0.0.1`, `10.0.0.0/8`, `::1`) of the reverse proxies in front of the
   * server. When the direct peer is one of them, the client address (for the wrong-key limit and the logs)
   * is the right-most address of its `Forwarded` (`for=`), else `X-Forwarded-For`, header that is not a
   * trusted proxy; from any other peer those headers are ignored. The direct peer is the framework's
   * `req.ip`: leave the framework's own proxy trust off when using this.
   * @default [] (forwarded headers are never believed)
   * @example ['127.0.0.1']
   */
  trustProxy?: readonly string[];
  /**
   * Serve the OpenAPI 3.1 document at `GET /openapi.json`.
   * @default true
   */
  openapi?: boolean;
  /**
   * The project dashboard (broadcasts, messages, deliveries, templates, audience), signed in with a project
   * secret, under `prefix`.
   * @default { enabled: true, prefix: '/dashboard' }
   */
  dashboard?: DashboardOptions;
  /**
   * Prometheus metrics at `GET /metrics` (requests, deliveries, send latency, SMTP replies, queue depth,
   * source rows), from a registry of this handler's own. Off unless given.
   * @default off
   * @example { token: process.env.METRICS_TOKEN }
   */
  metrics?: MetricsOptions;
  /**
   * The limits of the public signup endpoint `POST /subscribe/:formRef`, per client address (after
   * `trustProxy`) and per signed-up address, in this process.
   * @default { perIp: { perMinute: 10, burst: 10 }, perAddress: { perMinute: 0.1, burst: 3 } }
   */
  signupRateLimit?: SignupRateLimitOptions;
}

/**
 * The neutral handler: give it a request, get the response. It never rejects; every failure becomes an
 * error response.
 */
export interface MailroomHttpHandler {
  (req: NeutralRequest): Promise<NeutralResponse>;
  /** The effective body limit in bytes, for binders that stop reading a stream early. */
  readonly bodyLimit: number;
  /**
   * The error response for a failure a binder met before it could call the handler (a framework's own
   * body-limit or media-type error). A `MailroomError` keeps its code; anything else is a 500.
   */
  fail(req: NeutralRequest, error: unknown): NeutralResponse;
}
