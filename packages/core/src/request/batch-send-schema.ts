import { z } from 'zod';
import {
  checkBody,
  contentShape,
  DEFAULT_RECIPIENTS_PER_MESSAGE,
  recipientsSchema,
  refSchema,
  scheduleForSchema,
} from './schemas.js';
import { hasLineBreak } from './text-checks.js';
import { trackSchema } from './track-options.js';

/**
 * The schemas of `POST /send/mail/batch`: the envelope (`items`, `mode`) and one item, a single
 * message's body (`POST /send/mail`) with what a batch item adds: `options.scheduleFor`, `headers`,
 * `tags` and its own `idempotencyKey`. The parser (batch-send-parse.ts) checks each item with the
 * single send's parser, so an item is refused for exactly what a single send is refused for; these
 * schemas check the added fields and describe the whole shape for the OpenAPI document.
 */

/** Items a batch holds at most. */
export const MAX_BATCH_ITEMS = 100;

/** Custom headers an item may carry at most. */
export const MAX_BATCH_HEADERS = 20;

/** Tags an item may carry at most. */
export const MAX_BATCH_TAGS = 10;

/**
 * Headers the engine writes itself (addresses, identity, MIME structure, signatures, unsubscribe): a
 * custom header may not set them. Compared lower-cased.
 */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'date',
  'message-id',
  'reply-to',
  'sender',
  'return-path',
  'mime-version',
  'dkim-signature',
  'list-unsubscribe',
  'list-unsubscribe-post',
  'received',
]);

// RFC 5322 field name: printable US-ASCII except colon.
const HEADER_NAME = /^[!-9;-~]{1,76}$/;
// Tags are labels for reports and webhooks: a name and a value of word characters and dashes.
const TAG_TEXT = /^[A-Za-z0-9_-]{1,256}$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to match them
const CONTROL = /[\u0000-\u001f\u007f]/;

/** `headers`: custom header names to values; never a header the engine writes, never a line break. */
export const batchHeadersSchema = z
  .record(z.string(), z.string().max(998, 'Must be at most 998 characters'))
  .superRefine((value, ctx) => {
    const names = Object.keys(value);
    if (names.length > MAX_BATCH_HEADERS) {
      ctx.addIssue({ code: 'custom', message: `At most ${MAX_BATCH_HEADERS} headers` });
    }
    for (const name of names) {
      const lower = name.toLowerCase();
      if (!HEADER_NAME.test(name)) {
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: 'Not a header name (printable characters, no colon or space, at most 76)',
        });
      } else if (RESERVED_HEADERS.has(lower) || lower.startsWith('content-')) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'The engine writes this header itself' });
      } else if (hasLineBreak(value[name] as string)) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'Must not contain line breaks or NUL' });
      }
    }
  })
  .meta({
    description: `Custom headers of the message (at most ${MAX_BATCH_HEADERS}), for example { "X-Order": "123" }. Not From, To, Subject, Content-* or another header the engine writes.`,
  });

/** One tag: `{ name, value }`, each 1 to 256 letters, digits, `_` or `-`. */
export const batchTagSchema = z.object({
  name: z.string().regex(TAG_TEXT, 'Must be 1 to 256 letters, digits, _ or -'),
  value: z.string().regex(TAG_TEXT, 'Must be 1 to 256 letters, digits, _ or -'),
});

/** `tags`: at most {@link MAX_BATCH_TAGS}, names unique. */
export const batchTagsSchema = z
  .array(batchTagSchema)
  .max(MAX_BATCH_TAGS, `At most ${MAX_BATCH_TAGS} tags`)
  .superRefine((tags, ctx) => {
    const seen = new Set<string>();
    for (const [i, tag] of tags.entries()) {
      if (seen.has(tag.name))
        ctx.addIssue({ code: 'custom', path: [i, 'name'], message: 'Repeated tag name' });
      seen.add(tag.name);
    }
  })
  .meta({ description: 'Labels kept with the message: { name, value } pairs.' });

/** An item's own idempotency key: 1 to 256 characters, no control characters. */
export const itemIdempotencyKeySchema = z
  .string()
  .min(1, 'Must have 1 to 256 characters')
  .max(256, 'Must have 1 to 256 characters')
  .superRefine((value, ctx) => {
    if (CONTROL.test(value)) ctx.addIssue({ code: 'custom', message: 'Must not contain control characters' });
  })
  .meta({
    description:
      "The item's own idempotency key, in the namespace of POST /send/mail's Idempotency-Key: a repeat answers the first result for this item and sends nothing again.",
  });

/** What a batch item adds to a single message's body; the rest is checked by the single send's parser. */
export const batchItemExtrasSchema = z.object({
  idempotencyKey: itemIdempotencyKeySchema.nullish(),
  headers: batchHeadersSchema.nullish(),
  tags: batchTagsSchema.nullish(),
  options: z.object({ scheduleFor: scheduleForSchema.nullish() }).nullish(),
});

/** One item of `POST /send/mail/batch`, as documented: a single message's body and what an item adds. */
export const sendBatchItemSchema = z
  .object({
    ...contentShape,
    recipients: recipientsSchema(DEFAULT_RECIPIENTS_PER_MESSAGE, 'request', 1),
    options: z
      .object({
        acquiringAudience: refSchema.nullish(),
        scheduleFor: scheduleForSchema.nullish(),
        track: trackSchema.nullish(),
      })
      .nullish(),
    idempotencyKey: itemIdempotencyKeySchema.nullish(),
    headers: batchHeadersSchema.nullish(),
    tags: batchTagsSchema.nullish(),
  })
  .superRefine(checkBody);

/** `mode`: `strict` refuses the whole batch for one bad item; `partial` accepts the good ones. */
export const batchModeSchema = z.enum(['strict', 'partial']).meta({
  description: 'strict (the default): one bad item refuses the batch. partial: the good items are sent.',
});

/** The body of `POST /send/mail/batch` as documented (a bare array of items is accepted too, in `strict` mode). */
export const sendBatchRequestSchema = z.object({
  items: z
    .array(sendBatchItemSchema)
    .min(1, 'At least one item is required')
    .max(MAX_BATCH_ITEMS, `At most ${MAX_BATCH_ITEMS} items per batch`),
  mode: batchModeSchema.nullish(),
});

/** The body of `POST /send/mail/batch` as a client writes it. */
export type SendBatchRequestBody = z.input<typeof sendBatchRequestSchema>;

/** One item of a batch as a client writes it. */
export type SendBatchItemBody = z.input<typeof sendBatchItemSchema>;
