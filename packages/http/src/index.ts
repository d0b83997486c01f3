export { createHandler, DEFAULT_BODY_LIMIT } from './handler.js';
export { buildOpenApiDocument } from './openapi.js';
export type {
  HttpOptions,
  MailroomHttpHandler,
  NeutralRequest,
  NeutralResponse,
  RateLimitOptions,
} from './types.js';
