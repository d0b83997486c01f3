export type { DashboardOptions } from './dashboard/dashboard-options.js';
export { createHandler, DEFAULT_BODY_LIMIT } from './handler/handler.js';
export type { HttpOptions, MailroomHttpHandler } from './handler/http-options.js';
export type { AuthFailureLimitOptions } from './limits/auth-failure-limit.js';
export type { RateLimitOptions } from './limits/request-rate-limit.js';
export type { MetricsOptions } from './metrics/metrics-options.js';
export { DEFAULT_RETRY_AFTER_SECONDS } from './neutral/responses.js';
export type { NeutralRequest, NeutralResponse } from './neutral/types.js';
export { buildOpenApiDocument } from './openapi/openapi.js';
