import { z } from 'zod';
import type { ValidationIssue } from '../base/errors.js';
import { checkAddress } from '../request/address.js';
import { copyVariables } from '../request/copy-variables.js';
import { toValidationIssues, validationError } from '../request/issues.js';
import { hasLineBreak } from '../request/text-checks.js';

/**
 * The zod schemas of the management API's bodies (templates, senders, suppressions). Every object is
 * strict: a field the API does not know is refused by name, never ignored, so a typo (`subjet`) cannot
 * pass for a change that was made. The HTTP layer documents them with `z.toJSONSchema`.
 */

/** A template or audience group ref: 1-128 characters of letters, digits and `._:-`, starting with one of the first two. */
export const REF_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * The largest template source, in UTF-8 bytes: 1 MiB. Templates are rendered for every recipient, and a
 * real MJML newsletter is a few tens of kilobytes; a larger source is refused, naming `source`.
 */
export const MAX_TEMPLATE_SOURCE_BYTES = 1024 * 1024;

/** The largest default subject of a template, in characters. */
export const MAX_TEMPLATE_SUBJECT_LENGTH = 2000;

const refSchema = z
  .string()
  .regex(REF_PATTERN, 'A ref is 1-128 characters of letters, digits and ._:-')
  .meta({ description: 'Letters, digits and `._:-`, 1-128 characters.', examples: ['welcome'] });

const formatSchema = z
  .enum(['html', 'mjml', 'text'])
  .meta({ description: 'How the source is written; each is a Liquid template.' });

const sourceSchema = z
  .string()
  .superRefine((value, ctx) => {
    if (value.trim() === '') ctx.addIssue({ code: 'custom', message: 'Must not be empty' });
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > MAX_TEMPLATE_SOURCE_BYTES) {
      ctx.addIssue({
        code: 'custom',
        message: `A template source is at most ${MAX_TEMPLATE_SOURCE_BYTES} bytes (1 MiB); this one is ${bytes}`,
      });
    }
  })
  .meta({ description: 'The source (MJML, HTML or text, with Liquid), at most 1 MiB of UTF-8.' });

const subjectSchema = z
  .string()
  .max(MAX_TEMPLATE_SUBJECT_LENGTH)
  .superRefine((value, ctx) => {
    if (hasLineBreak(value)) ctx.addIssue({ code: 'custom', message: 'Must not contain line breaks or NUL' });
  })
  .meta({ description: 'The default subject (Liquid) of requests that give none.' });

const addressSchema = z
  .string()
  .superRefine((value, ctx) => {
    const result = checkAddress(value);
    if (!result.ok) ctx.addIssue({ code: 'custom', message: result.reason });
  })
  .meta({ format: 'email', examples: ['news@acme.test'] });

const variablesSchema = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    const result = copyVariables(value);
    if (!result.ok) ctx.addIssue({ code: 'custom', message: result.reason, path: result.path });
  })
  .meta({ description: 'Template variables: names to JSON values.' });

/** `POST /templates`: a new template (its version 1). */
export const templateCreateSchema = z.strictObject({
  ref: refSchema,
  format: formatSchema,
  source: sourceSchema,
  subject: subjectSchema.nullish(),
});

/** `PUT /templates/:ref`: the template's next version. Absent `format` and `subject` keep the current ones. */
export const templateUpdateSchema = z.strictObject({
  format: formatSchema.optional(),
  source: sourceSchema,
  subject: subjectSchema
    .nullish()
    .meta({ description: 'null removes the default subject; absent keeps it.' }),
});

/**
 * `POST /templates/:ref/validate`: a source to check without saving it. Absent fields are the stored
 * template's (a ref that does not exist needs `format` and `source`).
 */
export const templateCheckSchema = z.strictObject({
  format: formatSchema.optional(),
  source: sourceSchema.optional(),
  subject: subjectSchema.nullish(),
});

/** `POST /templates/:ref/preview`: the variables and recipient to render the stored template for. */
export const templatePreviewSchema = z.strictObject({
  variables: variablesSchema.optional(),
  recipient: z
    .strictObject({ address: addressSchema.optional(), name: z.string().max(256).optional() })
    .optional(),
});

/** `POST /senders`: an address the project may send from. */
export const senderAddSchema = z.strictObject({
  address: addressSchema,
  name: z
    .string()
    .max(256)
    .superRefine((value, ctx) => {
      if (hasLineBreak(value))
        ctx.addIssue({ code: 'custom', message: 'Must not contain line breaks or NUL' });
    })
    .nullish()
    .meta({ description: 'The display name of requests that give none.' }),
});

/** `POST /suppressions`: an address that gets no more broadcast mail. */
export const suppressionAddSchema = z.strictObject({
  address: addressSchema,
  reason: z
    .enum(['manual', 'hard-bounce', 'soft-bounce', 'mailbox-unavailable', 'complaint', 'unsubscribe'])
    .optional()
    .meta({ description: 'Why the address is suppressed.', default: 'manual' }),
  detail: z.string().max(1000).nullish().meta({ description: 'A note kept with the suppression.' }),
});

/**
 * Validates a management body: a JSON object, every field known and valid. An unknown field is an
 * issue at its own path (`subjet: Unknown field`), so the error names it.
 *
 * @throws MailroomError `VALIDATION_FAILED` with the issues.
 */
export function parseResourceBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw validationError([
      { code: 'invalid_type', path: [], message: 'The request body must be a JSON object' },
    ]);
  }
  const result = schema.safeParse(body, {
    error: (issue) => (issue.code === 'invalid_type' && issue.input === undefined ? 'Required' : undefined),
  });
  if (result.success) return result.data;
  const issues: ValidationIssue[] = [];
  for (const issue of result.error.issues) {
    if (issue.code !== 'unrecognized_keys') {
      issues.push(...toValidationIssues([issue]));
      continue;
    }
    const path = issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key));
    for (const key of issue.keys)
      issues.push({ code: issue.code, path: [...path, key], message: 'Unknown field' });
  }
  throw validationError(issues);
}
