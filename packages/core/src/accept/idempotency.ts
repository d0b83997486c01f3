import { createHash } from 'node:crypto';
import { isMailroomError, MailroomError } from '../base/errors.js';
import type { AuthContext } from '../context/auth-context.js';
import type { IdempotencyRecord, Json } from '../store/records.js';
import type { AcceptContext } from './accept-context.js';

/** Longest accepted idempotency key, in characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 256;

/** How long a key is remembered by default: 24 hours. */
export const DEFAULT_IDEMPOTENCY_TTL_MS = 86_400_000;

/** The operations a key can guard; part of the request hash, so one key cannot serve two of them. */
export type IdempotentOperation = 'send' | 'broadcast' | 'batch';

// Control characters have no place in a key (and cannot come through an HTTP header anyway).
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to match them
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A key as given, checked: 1 to 256 characters, no control characters; `VALIDATION_FAILED` otherwise. */
export function checkIdempotencyKey(key: unknown): string {
  const fail = (message: string) =>
    new MailroomError('VALIDATION_FAILED', message, {
      issues: [{ code: 'custom', path: ['idempotencyKey'], message }],
    });
  if (typeof key !== 'string') throw fail('The idempotency key must be a string');
  if (key.length < 1 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw fail(`The idempotency key must have 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
  }
  if (CONTROL.test(key)) throw fail('The idempotency key must not contain control characters');
  return key;
}

/**
 * SHA-256 (hex) of the operation, the secret's mode and the body as canonical JSON (object keys sorted,
 * at every depth), so that the same request sent with its keys in another order is the same request.
 */
export function requestHash(operation: IdempotentOperation, auth: AuthContext, body: unknown): string {
  return createHash('sha256')
    .update(`${operation}\n${auth.mode}\n`)
    .update(canonicalJson(body) ?? 'undefined')
    .digest('hex');
}

/**
 * Runs `run` at most once per (project, key) within the key's lifetime:
 * - a new key: runs it and remembers its result; if it throws, the key is forgotten (a request refused by
 *   validation, or that failed before it committed, may be sent again with the same key);
 * - a key whose first call finished, with the same request: answers that call's result with `replayed: true`;
 * - a key used with another request, or whose first call is still running: `IDEMPOTENCY_CONFLICT` (the
 *   latter retryable, with `retryAfter`).
 *
 * A process that dies between its commit and remembering the result leaves the key `running` until it
 * expires: repeats are refused rather than risk sending twice.
 *
 * `transactional`: `ctx.store` is bound to the app's transaction, so the key is written, finished or
 * undone with the request itself (the store's savepoint undoes it when `run` throws; the app's rollback
 * frees it for good). A key held by another app transaction not yet ended makes the database wait for
 * that one's end: then it is free again (rolled back) or answers its result (committed).
 */
export async function runIdempotent<T extends object>(
  ctx: AcceptContext,
  auth: AuthContext,
  input: {
    key: string;
    operation: IdempotentOperation;
    body: unknown;
    ttlMs: number;
    transactional?: boolean;
  },
  run: () => Promise<T>,
): Promise<T & { replayed?: boolean }> {
  const projectId = auth.project.id;
  const now = ctx.clock.now();
  const hash = requestHash(input.operation, auth, input.body);
  const record: IdempotencyRecord = {
    projectId,
    key: input.key,
    requestHash: hash,
    state: 'running',
    response: null,
    createdAt: now,
    expiresAt: new Date(now.getTime() + input.ttlMs),
  };
  const begun = await ctx.store.beginIdempotent(record, now);
  if (!begun.created) {
    const { existing } = begun;
    if (existing.requestHash !== hash) {
      throw new MailroomError(
        'IDEMPOTENCY_CONFLICT',
        'This idempotency key was already used with a different request',
        { retryable: false },
      );
    }
    if (existing.state !== 'done' || existing.response === null) {
      throw new MailroomError(
        'IDEMPOTENCY_CONFLICT',
        'A request with this idempotency key is still being processed; retry later',
        { retryAfter: 1 },
      );
    }
    return { ...(existing.response as unknown as T), replayed: true };
  }
  if (input.transactional) {
    // One transaction: the result is recorded with the request, or neither is.
    const result = await run();
    await ctx.store.finishIdempotent(projectId, input.key, toJson(result));
    return result;
  }
  let result: T;
  try {
    result = await run();
  } catch (error) {
    await ctx.store.dropIdempotent(projectId, input.key).catch((dropError: unknown) => {
      ctx.logger.warn(
        { err: dropError },
        'could not release an idempotency key; it stays held until it expires',
      );
    });
    throw error;
  }
  try {
    await ctx.store.finishIdempotent(projectId, input.key, toJson(result));
  } catch (error) {
    // The request is committed: answer it. Repeats of the key get 409 until it expires, never a second send.
    ctx.logger.warn(
      { err: isMailroomError(error) ? error.message : error },
      'could not record an idempotent response; repeats of its key are refused until it expires',
    );
  }
  return result;
}

/** A result as the JSON the store keeps (dates as ISO strings, undefined fields left out). */
function toJson(value: object): Json {
  return JSON.parse(JSON.stringify(value)) as Json;
}

/** JSON with the keys of every object sorted; `undefined` for a value JSON cannot hold at the top. */
export function canonicalJson(value: unknown): string | undefined {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}
