import type { z } from 'zod';
import { isMailroomError, MailroomError } from '../base/errors.js';
import { fastRecipients } from './fast-recipients.js';
import { toValidationIssues, validationError } from './issues.js';
import { normalizeBatchRequest, normalizeBroadcastRequest, normalizeSendRequest } from './normalize.js';
import type { ParsedBroadcast, SendRequest } from './request-types.js';
import {
  createBatchRequestSchema,
  createBroadcastRequestSchema,
  createSendRequestSchema,
  DEFAULT_RECIPIENTS_PER_BATCH,
  DEFAULT_RECIPIENTS_PER_MESSAGE,
  precheckedRecipientsSchemas,
} from './schemas.js';

/**
 * The entry points: validate a body with the schemas, then normalize it. Whatever the body is (null,
 * an array, a number, a huge string, `__proto__` keys), the only error that leaves is a
 * `MailroomError` with code `VALIDATION_FAILED` and zod's issues.
 */

/** Limits for {@link parseSendRequest}. */
export interface SendParseLimits {
  /** @default 10 */
  recipientsPerMessage?: number;
}

/** Limits for {@link parseBroadcastRequest}. */
export interface BroadcastParseLimits {
  /** @default 250 */
  recipientsPerBatch?: number;
}

/**
 * Validates and normalizes a `POST /send/mail` body.
 *
 * Header safety: a `subject` or a sender or recipient `name` holding CR, LF or NUL is refused (an
 * issue), never silently stripped; line breaks in `preheader`, which is body text, become spaces.
 *
 * @throws MailroomError `VALIDATION_FAILED`, with `issues` naming each field path and rule.
 * @example parseSendRequest({ subject: 'Hi', sender: 'Ann <ann@example.com>', message: 'Hello', recipients: 'bob@example.com' })
 */
export function parseSendRequest(body: unknown, limits: SendParseLimits = {}): SendRequest {
  const max = limitOf(limits.recipientsPerMessage, DEFAULT_RECIPIENTS_PER_MESSAGE, 'recipientsPerMessage');
  return guard(() => {
    tooManyRecipients(body, max, 'request');
    const recipients = fastRecipients(recipientsOf(body), 1);
    if (recipients) return normalizeSendRequest(validate(precheckedRecipientsSchemas.send, body), recipients);
    return normalizeSendRequest(validate(cached(sendSchemas, max, createSendRequestSchema), body));
  });
}

/**
 * Validates and normalizes a `POST /send/mail/broadcast` body: a later batch when it carries a
 * `broadcastRef` (then content fields are refused), otherwise the initial batch. Same header safety
 * as {@link parseSendRequest}.
 *
 * @throws MailroomError `VALIDATION_FAILED`, with `issues` naming each field path and rule.
 */
export function parseBroadcastRequest(body: unknown, limits: BroadcastParseLimits = {}): ParsedBroadcast {
  const max = limitOf(limits.recipientsPerBatch, DEFAULT_RECIPIENTS_PER_BATCH, 'recipientsPerBatch');
  return guard((): ParsedBroadcast => {
    tooManyRecipients(body, max, 'batch');
    // The list checked apart when it can be (see fastRecipients); the rest of the body by the schemas.
    const recipients = fastRecipients(recipientsOf(body), 0);
    if (isBatch(body)) {
      if (recipients) {
        const rest = validate(precheckedRecipientsSchemas.batch, body);
        return { kind: 'batch', request: normalizeBatchRequest(rest, recipients) };
      }
      const data = validate(cached(batchSchemas, max, createBatchRequestSchema), body);
      return { kind: 'batch', request: normalizeBatchRequest(data) };
    }
    if (recipients) {
      const rest = validate(precheckedRecipientsSchemas.broadcast, body);
      return { kind: 'initial', request: normalizeBroadcastRequest(rest, recipients) };
    }
    const data = validate(cached(broadcastSchemas, max, createBroadcastRequestSchema), body);
    return { kind: 'initial', request: normalizeBroadcastRequest(data) };
  });
}

// Schemas are built once per limit value: building one costs far more than parsing with it.
const sendSchemas = new Map<number, ReturnType<typeof createSendRequestSchema>>();
const broadcastSchemas = new Map<number, ReturnType<typeof createBroadcastRequestSchema>>();
const batchSchemas = new Map<number, ReturnType<typeof createBatchRequestSchema>>();

function cached<S>(cache: Map<number, S>, max: number, create: (max: number) => S): S {
  let schema = cache.get(max);
  if (!schema) {
    schema = create(max);
    cache.set(max, schema);
  }
  return schema;
}

function validate<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw validationError([
      { code: 'invalid_type', path: [], message: 'The request body must be a JSON object' },
    ]);
  }
  const result = schema.safeParse(body, { error: requiredMessage });
  if (!result.success) throw validationError(toValidationIssues(result.error.issues));
  return result.data;
}

function requiredMessage(issue: { code: string; input?: unknown }): string | undefined {
  return issue.code === 'invalid_type' && issue.input === undefined ? 'Required' : undefined;
}

function recipientsOf(body: unknown): unknown {
  return typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as { recipients?: unknown }).recipients
    : undefined;
}

function isBatch(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && 'broadcastRef' in body
    ? (body as { broadcastRef?: unknown }).broadcastRef != null
    : false;
}

// The count rule applies to the list as sent; refusing an oversized list before zod walks it keeps a
// hostile 100k-entry array from costing 100k element validations.
function tooManyRecipients(body: unknown, max: number, unit: 'request' | 'batch'): void {
  if (typeof body !== 'object' || body === null) return;
  const recipients: unknown = (body as { recipients?: unknown }).recipients;
  if (Array.isArray(recipients) && recipients.length > max) {
    throw validationError([
      { code: 'too_big', path: ['recipients'], message: `At most ${max} recipients per ${unit}` },
    ]);
  }
}

function guard<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (isMailroomError(error)) throw error;
    // A body zod could not even walk (a throwing getter, a Proxy from an embedding caller): still the
    // caller's input, so still a validation failure.
    throw validationError(
      [{ code: 'custom', path: [], message: 'The request body could not be read as JSON' }],
      error,
    );
  }
}

function limitOf(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new MailroomError('INTERNAL', `limits.${name} must be a positive integer, got ${String(value)}`);
  }
  return value;
}
