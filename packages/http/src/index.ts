export type { AuthFailureLimitOptions } from './auth-failure-limit.js';
export type { DashboardOptions } from './dashboard/dashboard-options.js';
export { createHandler, DEFAULT_BODY_LIMIT } from './handler.js';
export type { MetricsOptions } from './metrics-options.js';
export { buildOpenApiDocument } from './openapi.js';
export type {
  HttpOptions,
  MailroomHttpHandler,
  NeutralRequest,
  NeutralResponse,
  RateLimitOptions,
} from './types.js';
