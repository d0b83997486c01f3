import { ERROR_CODES, type MailroomError } from '@mailroom/core';
import type { NeutralResponse } from './types.js';

/** Content type of every response. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * `Retry-After` of a 503 whose error names no time of its own (`STORE_UNAVAILABLE`, `STORAGE_FULL`, ...):
 * long enough for a database restart or a failover to finish, short enough not to hold mail back.
 */
export const DEFAULT_RETRY_AFTER_SECONDS = 5;

const METHOD_NOT_ALLOWED = {
  code: 'METHOD_NOT_ALLOWED',
  status: ERROR_CODES.METHOD_NOT_ALLOWED.status,
} as const;

/** The error envelope: `message` and `statusCode` for every client, `error` and `detail` for Dart and Go. */
export interface ErrorBody {
  message: string;
  statusCode: number;
  code: string;
  error: string;
  detail: string;
  issues?: MailroomError['issues'];
}

/** A JSON response with the headers every response carries. */
export function jsonResponse(
  status: number,
  requestId: string,
  payload: unknown,
  headers: Record<string, string> = {},
): NeutralResponse {
  return {
    status,
    headers: {
      'content-type': JSON_CONTENT_TYPE,
      'cache-control': 'no-store',
      'x-request-id': requestId,
      ...headers,
    },
    body: JSON.stringify(payload),
  };
}

/** The success envelope: always HTTP 200 (the TypeScript SDK treats any other status as an error). */
export function successResponse(requestId: string, message: string, data: unknown): NeutralResponse {
  return jsonResponse(200, requestId, { message, statusCode: 200, data });
}

/**
 * The error envelope of a `MailroomError`; its status comes from the error (read from ERROR_CODES). A
 * server-side status hides the message: internals never reach the client.
 */
export function errorResponse(requestId: string, error: MailroomError): NeutralResponse {
  const headers: Record<string, string> = {};
  // A 503 always says when to come back: a client or load balancer then tells an outage from a bug.
  const retryAfter = error.retryAfter ?? (error.status === 503 ? DEFAULT_RETRY_AFTER_SECONDS : undefined);
  if (retryAfter !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfter)));
  // The rest of an oversized body is never read, so the connection cannot be reused.
  if (error.code === 'PAYLOAD_TOO_LARGE') headers.connection = 'close';
  if (error.status >= 500) {
    const code = error.status === 500 ? 'INTERNAL' : error.code;
    const message = error.status === 500 ? 'Internal server error' : 'Service unavailable, retry later';
    return jsonResponse(error.status, requestId, envelope(message, error.status, code), headers);
  }
  const body = envelope(error.message, error.status, error.code);
  if (error.issues) body.issues = error.issues;
  return jsonResponse(error.status, requestId, body, headers);
}

/** 405 with the methods the path does take. */
export function methodNotAllowedResponse(
  requestId: string,
  method: string,
  allow: readonly string[],
): NeutralResponse {
  const message = `Method ${method} is not allowed here; use ${allow.join(' or ')}`;
  return jsonResponse(
    METHOD_NOT_ALLOWED.status,
    requestId,
    envelope(message, METHOD_NOT_ALLOWED.status, METHOD_NOT_ALLOWED.code),
    { allow: allow.join(', ') },
  );
}

function envelope(message: string, statusCode: number, code: string): ErrorBody {
  return { message, statusCode, code, error: message, detail: message };
}
