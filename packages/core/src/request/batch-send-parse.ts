import type { ValidationIssue } from '../base/errors.js';
import { isMailroomError } from '../base/errors.js';
import type { MessageTag } from '../store/records.js';
import { batchItemExtrasSchema, MAX_BATCH_ITEMS } from './batch-send-schema.js';
import { parseDateTime } from './dates.js';
import { toValidationIssues, validationError } from './issues.js';
import { parseSendRequest, type SendParseLimits } from './parse.js';
import type { SendRequest } from './request-types.js';

/** How a batch treats its bad items: `strict` refuses the whole batch, `partial` sends the good ones. */
export type BatchMode = 'strict' | 'partial';

/** One good item of a batch, normalized. */
export interface BatchItemRequest {
  /** Its position in `items`, from 0. */
  index: number;
  /** The single message it is, as `parseSendRequest` gives it. */
  request: SendRequest;
  /** When to send it; null: now. */
  scheduleFor: Date | null;
  /** Its own idempotency key, or null. */
  idempotencyKey: string | null;
  /** Custom headers (checked: never one the engine writes). */
  headers: Record<string, string>;
  /** Its tags. */
  tags: MessageTag[];
  /** The item as sent, for its idempotency key's request hash. */
  body: unknown;
}

/** One bad item: its index, the error code and what is wrong, each issue's path from the body's root. */
export interface BatchItemProblem {
  index: number;
  code: string;
  message: string;
  issues: ValidationIssue[];
}

/** A batch body after validation: the good items and the bad ones. */
export interface ParsedSendBatch {
  mode: BatchMode;
  /** Items in the body. */
  count: number;
  items: BatchItemRequest[];
  problems: BatchItemProblem[];
}

/**
 * Validates `POST /send/mail/batch`: `{ items: [...], mode? }` or a bare array of items (then `strict`).
 * A body that is not a batch (no item list, more than {@link MAX_BATCH_ITEMS} items, an unknown mode) is
 * refused whole with `VALIDATION_FAILED`; each item is then checked on its own, by the single send's
 * rules plus the item's own fields, and a bad item becomes a problem naming its index (issues' paths
 * start `items[i]`). Deciding what the problems mean (strict or partial) is the caller's.
 */
export function parseSendBatchRequest(body: unknown, limits: SendParseLimits = {}): ParsedSendBatch {
  const { items, mode } = envelopeOf(body);
  const parsed: ParsedSendBatch = { mode, count: items.length, items: [], problems: [] };
  for (let index = 0; index < items.length; index++) {
    const item: unknown = items[index];
    const prefix = ['items', index];
    const issues: ValidationIssue[] = [];
    let request: SendRequest | undefined;
    try {
      request = parseSendRequest(item, limits);
    } catch (error) {
      if (!isMailroomError(error) || !error.issues) throw error;
      issues.push(...error.issues.map((issue) => ({ ...issue, path: [...prefix, ...issue.path] })));
    }
    const extras =
      typeof item === 'object' && item !== null && !Array.isArray(item)
        ? batchItemExtrasSchema.safeParse(item)
        : undefined;
    if (extras && !extras.success) {
      for (const issue of toValidationIssues(extras.error.issues)) {
        issues.push({ ...issue, path: [...prefix, ...issue.path] });
      }
    }
    if (issues.length > 0 || !request || !extras?.success) {
      parsed.problems.push({
        index,
        code: 'VALIDATION_FAILED',
        message: validationError(issues).message,
        issues,
      });
      continue;
    }
    const data = extras.data;
    const when = data.options?.scheduleFor;
    const scheduled = when == null ? null : parseDateTime(when);
    parsed.items.push({
      index,
      request,
      scheduleFor: scheduled?.ok ? scheduled.date : null,
      idempotencyKey: data.idempotencyKey ?? null,
      headers: data.headers ?? {},
      tags: data.tags ?? [],
      body: item,
    });
  }
  return parsed;
}

function envelopeOf(body: unknown): { items: unknown[]; mode: BatchMode } {
  let items: unknown;
  let mode: unknown = 'strict';
  if (Array.isArray(body)) {
    items = body;
  } else if (typeof body === 'object' && body !== null) {
    items = (body as { items?: unknown }).items;
    mode = (body as { mode?: unknown }).mode ?? 'strict';
  } else {
    throw validationError([
      {
        code: 'invalid_type',
        path: [],
        message: 'The request body must be a JSON object { items, mode? } or an array of items',
      },
    ]);
  }
  if (mode !== 'strict' && mode !== 'partial') {
    throw validationError([
      { code: 'invalid_value', path: ['mode'], message: 'Expected "strict" or "partial"' },
    ]);
  }
  if (!Array.isArray(items)) {
    throw validationError([
      {
        code: 'invalid_type',
        path: ['items'],
        message: items === undefined ? 'Required' : 'Expected an array of messages',
      },
    ]);
  }
  if (items.length === 0) {
    throw validationError([{ code: 'too_small', path: ['items'], message: 'At least one item is required' }]);
  }
  if (items.length > MAX_BATCH_ITEMS) {
    throw validationError([
      {
        code: 'too_big',
        path: ['items'],
        message: `At most ${MAX_BATCH_ITEMS} items per batch (got ${items.length})`,
      },
    ]);
  }
  return { items, mode };
}
