import { z } from 'zod';
import { MailroomError } from '../base/errors.js';
import type { AttachmentSpec } from '../store/records.js';
import { checkAddress, checkMailbox } from './address.js';
import type { FieldProblem } from './attachments.js';
import { isHttpUrl, resolveAttachment } from './attachments.js';
import { copyVariables, type VariablesBudget } from './copy-variables.js';
import { DATE_OR_DATE_TIME_RULE, DATE_TIME_RULE, parseDateOrDateTime, parseDateTime } from './dates.js';
import {
  FIELD_LIMITS,
  type FieldLimitName,
  MAX_MAILBOX_LENGTH,
  RECIPIENT_VARIABLES_BUDGET,
  TEMPLATE_VARIABLES_BUDGET,
} from './field-limits.js';
import { localTimeSchema, sendingWindowSchema } from './local-time-schema.js';
import type { SourceSpec } from './request-types.js';
import { resolveSource } from './sources.js';
import { hasLineBreak, isBlankText } from './text-checks.js';
import { trackSchema } from './track-options.js';

/**
 * The zod schemas of the request bodies. They describe the wire shapes every public client sends
 * (wire-compat.md), so that `z.toJSONSchema` can document them; rules that JSON Schema cannot say
 * (address syntax, base64, either-or fields) are refinements, which the JSON Schema leaves out.
 * Turning the accepted shapes into one shape is the separate normalize step.
 *
 * Optional fields accept `null` as "absent": the Dart client serializes unset fields as null.
 */

/** Default of `limits.recipientsPerMessage`. */
export const DEFAULT_RECIPIENTS_PER_MESSAGE = 10;

/** Default of `limits.recipientsPerBatch`. */
export const DEFAULT_RECIPIENTS_PER_BATCH = 250;

type IssueSink = { addIssue(issue: { code: 'custom'; message: string; path?: PropertyKey[] }): void };

function report(ctx: IssueSink, problems: readonly FieldProblem[]): void {
  for (const problem of problems)
    ctx.addIssue({ code: 'custom', message: problem.message, path: problem.path });
}

// A union's own message, except for a missing field, which reads like any other missing field.
function unionError(expected: string) {
  return (issue: { input?: unknown }) => (issue.input === undefined ? 'Required' : expected);
}

/** A string of at most the cap `name` of the field-limits table (its `maxLength` in the JSON Schema). */
function capped(name: FieldLimitName) {
  const max = FIELD_LIMITS[name].max;
  return z.string().max(max, `Must be at most ${max} characters`);
}

/** A non-empty reference (template ref, audience group ref, broadcast ref). */
export const refSchema = capped('ref').superRefine((value, ctx) => {
  if (isBlankText(value)) ctx.addIssue({ code: 'custom', message: 'Must not be empty' });
});

/** A bare email address. */
const addressSchema = capped('address')
  .superRefine((value, ctx) => {
    const result = checkAddress(value);
    if (!result.ok) ctx.addIssue({ code: 'custom', message: result.reason });
  })
  .meta({ format: 'email', description: 'An email address, for example ann@example.com.' });

/** A bare address or `Name <address>`: its name and address each within their caps. */
const mailboxSchema = z
  .string()
  .max(MAX_MAILBOX_LENGTH, `Must be at most ${MAX_MAILBOX_LENGTH} characters`)
  .superRefine((value, ctx) => {
    const result = checkMailbox(value);
    if (!result.ok) ctx.addIssue({ code: 'custom', message: result.reason });
  })
  .meta({ description: 'An email address, or a display name and address: "Ann Lee <ann@example.com>".' });

/** A display name: never a line break or NUL, which could split a header. */
const nameSchema = capped('name').superRefine((value, ctx) => {
  if (hasLineBreak(value)) ctx.addIssue({ code: 'custom', message: 'Must not contain line breaks or NUL' });
});

/** The subject: non-empty, and never a line break or NUL, which could split the header. */
const subjectSchema = capped('subject').superRefine((value, ctx) => {
  if (isBlankText(value)) ctx.addIssue({ code: 'custom', message: 'Must not be empty' });
  else if (hasLineBreak(value))
    ctx.addIssue({ code: 'custom', message: 'Must not contain line breaks or NUL' });
});

/** A non-empty body (plaintext or HTML). */
const messageSchema = capped('message').superRefine((value, ctx) => {
  if (isBlankText(value)) ctx.addIssue({ code: 'custom', message: 'Must not be empty' });
});

/** An absolute http(s) URL. */
const httpUrlSchema = capped('url')
  .superRefine((value, ctx) => {
    if (!isHttpUrl(value)) ctx.addIssue({ code: 'custom', message: 'Must be an absolute http(s) URL' });
  })
  .meta({ format: 'uri' });

/** Template variables: an object of JSON values, within `budget`. */
function variablesSchema(budget: VariablesBudget) {
  return z
    .record(z.string(), z.unknown())
    .superRefine((value, ctx) => {
      const result = copyVariables(value, budget);
      if (!result.ok) ctx.addIssue({ code: 'custom', message: result.reason, path: result.path });
    })
    .meta({
      description:
        `Template variables: names to JSON values (strings and numbers are typical). At most ${budget.maxBytes} ` +
        `bytes as JSON and ${budget.maxKeys} keys (counted at every depth).`,
      maxProperties: budget.maxKeys,
    });
}

const recipientVariablesSchema = variablesSchema(RECIPIENT_VARIABLES_BUDGET);
const templateVariablesSchema = variablesSchema(TEMPLATE_VARIABLES_BUDGET);

/** The sender: `{ address, name? }`, or a string `ann@example.com` / `Ann <ann@example.com>`. */
export const senderSchema = z.union(
  [mailboxSchema, z.object({ address: addressSchema, name: nameSchema.nullish() })],
  {
    error: unionError('Expected an address string ("Ann <ann@example.com>") or an object { address, name? }'),
  },
);

/** One recipient as an object. */
const recipientObjectSchema = z.object({
  address: addressSchema,
  name: nameSchema.nullish(),
  variables: recipientVariablesSchema.nullish(),
});

const RECIPIENT_EXPECTED = 'Expected an address string or a recipient object { address, name?, variables? }';

/** One recipient: an object, or an address string (`Name <address>` accepted). */
export const recipientSchema = z.union([mailboxSchema, recipientObjectSchema], {
  error: unionError(RECIPIENT_EXPECTED),
});

/**
 * `recipients`: an array of recipients, or a single one (TypeScript client). `max` applies to the list
 * as sent, before duplicates are collapsed.
 */
export function recipientsSchema(max: number, unit: 'request' | 'batch', min: number) {
  let list = z.array(recipientSchema).max(max, `At most ${max} recipients per ${unit}`);
  if (min > 0) list = list.min(min, 'At least one recipient is required');
  return z.union([mailboxSchema, recipientObjectSchema, list], {
    error: unionError(`${RECIPIENT_EXPECTED}, or an array of them`),
  });
}

/** `template`: `{ ref, variables? }`; older clients send `id` for `ref`. */
export const templateSchema = z
  .object({
    ref: refSchema.nullish(),
    id: refSchema.nullish().meta({ description: 'Older clients: the same as ref.' }),
    variables: templateVariablesSchema.nullish(),
  })
  .superRefine((value, ctx) => {
    if (value.ref == null && value.id == null) {
      ctx.addIssue({ code: 'custom', path: ['ref'], message: 'Required: the template ref' });
    }
  });

const resolvedAttachments = new WeakMap<object, AttachmentSpec>();

/** One attachment: `{ name?, url }` or `{ name?, content }` (raw base64 or a base64 data URI). */
export const attachmentSchema = z
  .object({
    name: capped('name')
      .nullish()
      .meta({ description: 'File name with its extension, for example report.pdf.' }),
    url: capped('url').nullish().meta({ format: 'uri', description: 'Public http(s) link to the file.' }),
    content: z
      .string()
      .nullish()
      .meta({ description: 'Base64 of the file, or a data URI: data:application/pdf;base64,...' }),
  })
  .superRefine((value, ctx) => {
    const result = resolveAttachment(value);
    if (result.ok) resolvedAttachments.set(value, result.attachment);
    else report(ctx, result.problems);
  });

/** The checked attachment as an {@link AttachmentSpec}; reuses the result of the schema's own check. */
export function attachmentSpecOf(value: z.output<typeof attachmentSchema>): AttachmentSpec {
  const cached = resolvedAttachments.get(value);
  if (cached) return cached;
  const result = resolveAttachment(value);
  if (!result.ok) throw new MailroomError('INTERNAL', 'attachmentSpecOf: the attachment was not validated');
  return result.attachment;
}

/** A calendar date or a date-time with a zone. */
const dateOrDateTimeSchema = z
  .string()
  .superRefine((value, ctx) => {
    const result = parseDateOrDateTime(value);
    if (!result.ok) ctx.addIssue({ code: 'custom', message: result.reason });
  })
  .meta({ description: DATE_OR_DATE_TIME_RULE });

/** `invitation` (TypeScript client): a calendar invitation. */
export const invitationSchema = z
  .object({
    title: capped('subject').superRefine((value, ctx) => {
      if (isBlankText(value)) ctx.addIssue({ code: 'custom', message: 'Must not be empty' });
    }),
    startDate: dateOrDateTimeSchema,
    endDate: dateOrDateTimeSchema,
    url: httpUrlSchema.nullish(),
    description: capped('invitationText').nullish(),
    location: capped('invitationText').nullish(),
  })
  .superRefine((value, ctx) => {
    const start = parseDateOrDateTime(value.startDate);
    const end = parseDateOrDateTime(value.endDate);
    if (start.ok && end.ok && end.date.getTime() < start.date.getTime()) {
      ctx.addIssue({ code: 'custom', path: ['endDate'], message: 'Must not be before startDate' });
    }
  });

/** `preserve` keeps a stored value; `override` replaces it. */
const existingActionSchema = z.enum(['preserve', 'override']);

const sourceFieldsShape = {
  ref: capped('ref').nullish().meta({ description: 'Audience group source: the group ref.' }),
  label: capped('ref').nullish().meta({ description: 'CSV source: tags every recipient it adds.' }),
  url: capped('url').nullish().meta({ format: 'uri', description: 'CSV source: file URL (byte ranges).' }),
  columnMappings: z
    .record(capped('ref'), capped('ref'))
    .superRefine((value, ctx) => {
      const max = FIELD_LIMITS.columnMappings.max;
      if (Object.keys(value).length > max)
        ctx.addIssue({ code: 'custom', message: `At most ${max} mappings` });
    })
    .nullish()
    .meta({
      description: 'CSV source: CSV heading to trait name.',
      maxProperties: FIELD_LIMITS.columnMappings.max,
    }),
  actionOnExistingTrait: existingActionSchema.nullish().meta({ description: '@default preserve' }),
  actionOnExistingProfile: existingActionSchema.nullish().meta({ description: '@default preserve' }),
  includeUnsubscribed: z.boolean().nullish().meta({
    description: '@default false. Needs a key of scope `full` (sending past consent is an admin act).',
  }),
  topic: capped('ref').nullish().meta({
    description:
      "Only contacts whose state for this topic allows it (the source's filter; overrides `options.topic`).",
  }),
};

const resolvedSources = new WeakMap<object, SourceSpec>();

/**
 * One broadcast source: `{ type?, config: { ... } }` (Dart) or the same fields flat. `type` CSV selects
 * a CSV file; none, AUDIENCE or AUDIENCE_GROUP (any case) an audience group.
 */
export const sourceSchema = z
  .object({
    type: capped('ref').nullish().meta({ description: 'CSV, or AUDIENCE (the default); any case.' }),
    config: z.object(sourceFieldsShape).nullish(),
    ...sourceFieldsShape,
  })
  .superRefine((value, ctx) => {
    const result = resolveSource(value);
    if (result.ok) resolvedSources.set(value, result.source);
    else report(ctx, result.problems);
  });

/** The checked source as a {@link SourceSpec}; reuses the result of the schema's own check. */
export function sourceSpecOf(value: z.output<typeof sourceSchema>): SourceSpec {
  const cached = resolvedSources.get(value);
  if (cached) return cached;
  const result = resolveSource(value);
  if (!result.ok) throw new MailroomError('INTERNAL', 'sourceSpecOf: the source was not validated');
  return result.source;
}

/** `options.scheduleFor`: a date-time with Z or an offset. */
export const scheduleForSchema = z
  .string()
  .superRefine((value, ctx) => {
    const result = parseDateTime(value);
    if (!result.ok) ctx.addIssue({ code: 'custom', message: result.reason });
  })
  .meta({ format: 'date-time', description: `${DATE_TIME_RULE}. Absent or null: send now.` });

/** Fields shared by a single message and an initial broadcast batch. */
export const contentShape = {
  subject: subjectSchema.nullish().meta({
    description:
      "Subject line (Liquid). Required with message; with template, absent uses the template's default subject.",
  }),
  preheader: capped('preheader').nullish(),
  sender: senderSchema,
  message: messageSchema
    .nullish()
    .meta({ description: 'Body, plaintext or HTML. Either message or template.' }),
  template: templateSchema.nullish(),
  replyAddress: addressSchema.nullish(),
  attachments: z
    .array(attachmentSchema)
    .max(FIELD_LIMITS.attachments.max, itemsMessage('attachments'))
    .nullish(),
  invitation: invitationSchema.nullish(),
};

export function checkBody(
  value: { subject?: unknown; message?: unknown; template?: unknown },
  ctx: IssueSink,
): void {
  const hasMessage = value.message != null;
  const hasTemplate = value.template != null;
  // Without a template there is no default subject to fall back on; with one, the engine checks that the
  // template has one (it needs the store).
  if (value.subject == null && !hasTemplate) {
    ctx.addIssue({
      code: 'custom',
      path: ['subject'],
      message: 'Required (or use a template that has a default subject)',
    });
  }
  if (hasMessage && hasTemplate) {
    ctx.addIssue({
      code: 'custom',
      path: ['template'],
      message: 'Give either message or template, not both',
    });
  } else if (!hasMessage && !hasTemplate) {
    ctx.addIssue({ code: 'custom', path: ['message'], message: 'Either message or template is required' });
  }
}

function checkTargets(
  value: { recipients?: unknown; sources?: unknown; audience?: unknown },
  ctx: IssueSink,
) {
  const count = (list: unknown) => (Array.isArray(list) ? list.length : list == null ? 0 : 1);
  if (count(value.recipients) + count(value.sources) + count(value.audience) === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['recipients'],
      message: 'Give recipients or sources: at least one of them must be non-empty',
    });
  }
}

function itemsMessage(name: 'attachments' | 'sources' | 'audience'): string {
  return `At most ${FIELD_LIMITS[name].max} items`;
}

const sourcesSchema = z.array(sourceSchema).max(FIELD_LIMITS.sources.max, itemsMessage('sources')).nullish();

const audienceSchema = z
  .array(refSchema)
  .max(FIELD_LIMITS.audience.max, itemsMessage('audience'))
  .nullish()
  .meta({
    description: 'TypeScript client: audience group refs, each an audience group source with defaults.',
  });

/**
 * `POST /send/mail` with at most `maxRecipients` recipients.
 * @param maxRecipients @default 10
 */
export function createSendRequestSchema(maxRecipients: number = DEFAULT_RECIPIENTS_PER_MESSAGE) {
  return sendRequestSchemaWith(recipientsSchema(maxRecipients, 'request', 1));
}

function sendRequestSchemaWith<R extends z.ZodType>(recipients: R) {
  return z
    .object({
      ...contentShape,
      recipients,
      options: z
        .object({
          acquiringAudience: refSchema.nullish(),
          track: trackSchema.nullish(),
          topic: refSchema.nullish().meta({
            description:
              'A transactional message names a topic only to be held to it: not sent when the contact left it.',
          }),
        })
        .nullish(),
    })
    .superRefine(checkBody);
}

/**
 * `POST /send/mail/broadcast` without `broadcastRef`: the initial batch, with at most `maxRecipients`
 * inline recipients.
 * @param maxRecipients @default 250
 */
export function createBroadcastRequestSchema(maxRecipients: number = DEFAULT_RECIPIENTS_PER_BATCH) {
  return broadcastRequestSchemaWith(recipientsSchema(maxRecipients, 'batch', 0).nullish());
}

function broadcastRequestSchemaWith<R extends z.ZodType>(recipients: R) {
  return z
    .object({
      ...contentShape,
      recipients,
      sources: sourcesSchema,
      audience: audienceSchema,
      options: z
        .object({
          acquiringAudience: refSchema.nullish(),
          scheduleFor: scheduleForSchema.nullish(),
          storeContent: z.boolean().nullish(),
          track: trackSchema.nullish(),
          topic: refSchema.nullish().meta({
            description: 'The topic of the broadcast: only contacts whose state for it allows it receive it.',
          }),
          localTime: localTimeSchema.nullish(),
          window: sendingWindowSchema.nullish(),
        })
        .nullish(),
    })
    .superRefine((value, ctx) => {
      checkBody(value, ctx);
      checkTargets(value, ctx);
    });
}

// A later batch takes its content from the broadcast: these keys may only be absent or null.
function locked(field: string) {
  return z.null({ error: `A batch cannot change ${field}: it comes from the broadcast` }).optional();
}

/**
 * `POST /send/mail/broadcast` with `broadcastRef`: a later batch of at most `maxRecipients` inline
 * recipients, and/or sources. Content fields are refused.
 * @param maxRecipients @default 250
 */
export function createBatchRequestSchema(maxRecipients: number = DEFAULT_RECIPIENTS_PER_BATCH) {
  return batchRequestSchemaWith(recipientsSchema(maxRecipients, 'batch', 0).nullish());
}

function batchRequestSchemaWith<R extends z.ZodType>(recipients: R) {
  return z
    .object({
      broadcastRef: refSchema,
      recipients,
      sources: sourcesSchema,
      audience: audienceSchema,
      subject: locked('subject'),
      preheader: locked('preheader'),
      sender: locked('sender'),
      message: locked('message'),
      template: locked('template'),
      replyAddress: locked('replyAddress'),
      attachments: locked('attachments'),
      invitation: locked('invitation'),
      options: locked('options'),
    })
    .superRefine(checkTargets);
}

/**
 * The three request schemas with `recipients` taken as is, for bodies whose recipients list was already
 * checked and normalized by `fastRecipients` (every other field and rule is the same). Internal: the
 * documented schemas are the ones above.
 */
export const precheckedRecipientsSchemas = {
  send: sendRequestSchemaWith(z.unknown()),
  broadcast: broadcastRequestSchemaWith(z.unknown()),
  batch: batchRequestSchemaWith(z.unknown()),
};

/** The body of `POST /send/mail`, with the default limit of 10 recipients. */
export const sendRequestSchema = createSendRequestSchema();

/** The body of an initial broadcast batch, with the default limit of 250 recipients. */
export const broadcastRequestSchema = createBroadcastRequestSchema();

/** The body of a later broadcast batch (with `broadcastRef`), with the default limit of 250 recipients. */
export const batchRequestSchema = createBatchRequestSchema();

/** The body of `POST /send/mail` as a client writes it. */
export type SendRequestBody = z.input<typeof sendRequestSchema>;

/** The body of an initial broadcast batch as a client writes it. */
export type BroadcastRequestBody = z.input<typeof broadcastRequestSchema>;

/** The body of a later broadcast batch as a client writes it. */
export type BatchRequestBody = z.input<typeof batchRequestSchema>;
