import { MailroomError } from '@mailroom/core';

/**
 * The errors the HTTP layer raises itself. Both binders and the handler build them here, so a refusal
 * reads the same whichever component detected it.
 */

/** 413: the body is over the limit (raised before it is parsed). */
export function payloadTooLarge(limit: number): MailroomError {
  return new MailroomError('PAYLOAD_TOO_LARGE', `Request body exceeds the limit of ${limit} bytes`);
}

/** 415: the body is not `application/json` (UTF-8). */
export function unsupportedMediaType(): MailroomError {
  return new MailroomError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
}

/** 400: the body is not valid UTF-8 JSON. */
export function malformedJson(): MailroomError {
  return new MailroomError('MALFORMED_JSON', 'Request body is not valid JSON');
}

/** 400: the body could not be read as sent (for example a Content-Length that does not match). */
export function unreadableBody(): MailroomError {
  return new MailroomError('VALIDATION_FAILED', 'Request body could not be read');
}

/** 404: no route at this path. */
export function routeNotFound(): MailroomError {
  return new MailroomError('NOT_FOUND', 'Route not found');
}
