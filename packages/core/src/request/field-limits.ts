import { MAX_ADDRESS_LENGTH, MAX_DISPLAY_NAME_LENGTH } from './address.js';
import { MAX_VARIABLE_DEPTH, type VariablesBudget } from './copy-variables.js';

/**
 * The one table of caps on the fields of the send and broadcast requests (issue 30). The request schemas
 * (`schemas.ts`) read it, so the checks run in the zod parse, before anything is stored; the OpenAPI
 * document gets its `maxLength`, `maxItems` and `maxProperties` from the same schemas; the README's table
 * is checked against it by a test. A value over its cap is a 400 `VALIDATION_FAILED` whose issue names
 * the field's path; a body over its endpoint's byte cap is a 413 before it is parsed.
 *
 * The values are generous for real mail and small enough that a hostile request costs little: a subject
 * is one header line (RFC 5322 caps a line at 998 characters), a name or a ref is an identifier, a body
 * of 1 MiB is far past what mailbox providers display (Gmail clips at 102 KB).
 */

/** One cap: the fields it applies to, its value and unit, and why that value. */
export interface FieldLimit {
  /** The request fields (paths, `[]` for every item) this cap applies to. */
  readonly fields: string;
  /** The largest accepted value. */
  readonly max: number;
  /**
   * `characters`: UTF-16 code units of the string (what JavaScript's `length` counts); `bytes`: UTF-8
   * bytes of the value's JSON text; `keys`: object keys counted at every depth; `items`: array entries;
   * `levels`: nesting of objects and arrays; `columns`: cells of a CSV header row.
   */
  readonly unit: 'characters' | 'bytes' | 'keys' | 'items' | 'levels' | 'columns';
  /** Why this value. */
  readonly why: string;
}

const KIB = 1024;
const MIB = 1024 * KIB;

/** The caps of the send and broadcast requests' fields; see the file's comment. */
export const FIELD_LIMITS = {
  subject: {
    fields: 'subject, invitation.title',
    max: 998,
    unit: 'characters',
    why: 'One header line (RFC 5322, 2.1.1)',
  },
  preheader: { fields: 'preheader', max: 998, unit: 'characters', why: 'Inbox preview text' },
  name: {
    fields: 'sender.name, recipients[].name, the name in "Name <address>", attachments[].name',
    max: MAX_DISPLAY_NAME_LENGTH,
    unit: 'characters',
    why: 'A display or file name',
  },
  address: {
    fields: 'sender, sender.address, recipients[], recipients[].address, replyAddress',
    max: MAX_ADDRESS_LENGTH,
    unit: 'characters',
    why: 'RFC 5321 path limit',
  },
  ref: {
    fields:
      'template.ref, template.id, broadcastRef, options.acquiringAudience, audience[], sources[].ref, sources[].label, sources[].type',
    max: 256,
    unit: 'characters',
    why: 'An identifier',
  },
  url: {
    fields: 'attachments[].url, sources[].url, invitation.url',
    max: 2048,
    unit: 'characters',
    why: 'What browsers and servers reliably take',
  },
  message: { fields: 'message', max: MIB, unit: 'characters', why: 'Mailbox providers clip far sooner' },
  invitationText: {
    fields: 'invitation.description, invitation.location',
    max: 64 * KIB,
    unit: 'characters',
    why: 'Calendar text',
  },
  recipientVariables: {
    fields: 'recipients[].variables',
    max: 64 * KIB,
    unit: 'bytes',
    why: 'Stored with every delivery: 250 per batch',
  },
  templateVariables: {
    fields: 'template.variables',
    max: 256 * KIB,
    unit: 'bytes',
    why: 'Stored once per mailing',
  },
  variableKeys: {
    fields: 'template.variables, recipients[].variables',
    max: 1000,
    unit: 'keys',
    why: 'Bounds the work of copying and rendering',
  },
  variableDepth: {
    fields: 'template.variables, recipients[].variables',
    max: MAX_VARIABLE_DEPTH,
    unit: 'levels',
    why: 'Bounds the recursion of the copy',
  },
  columnMappings: {
    fields: 'sources[].columnMappings',
    max: 1000,
    unit: 'keys',
    why: 'One per CSV column; each heading and trait name at most 256 characters',
  },
  csvColumns: {
    fields: 'the header row of a CSV source or audience import',
    max: 1000,
    unit: 'columns',
    why: 'Each column is a trait of every profile it makes; a wider file fails before any row is read',
  },
  profileTraits: {
    fields: 'a profile’s traits (PATCH /audience/profiles/:address, CSV rows, audience sources)',
    max: 1000,
    unit: 'keys',
    why: 'Like variables: traits are rendered as `profile.*`; counted at every depth',
  },
  profileTraitBytes: {
    fields: 'a profile’s traits, as JSON',
    max: 64 * KIB,
    unit: 'bytes',
    why: 'Like recipients[].variables: stored with the profile and copied into each delivery',
  },
  sources: { fields: 'sources', max: 100, unit: 'items', why: 'Each one is a durable job' },
  audience: { fields: 'audience', max: 100, unit: 'items', why: 'Each one is a durable job' },
  attachments: {
    fields: 'attachments',
    max: 100,
    unit: 'items',
    why: 'Schema ceiling; accept then applies limits.attachments.maxCount (default 10, 413)',
  },
} as const satisfies Record<string, FieldLimit>;

/** The budget of one recipient's variables (`recipientVariables` and `variableKeys` above). */
export const RECIPIENT_VARIABLES_BUDGET: Readonly<VariablesBudget> = {
  maxBytes: FIELD_LIMITS.recipientVariables.max,
  maxKeys: FIELD_LIMITS.variableKeys.max,
};

/** The budget of a template's (global) variables (`templateVariables` and `variableKeys` above). */
export const TEMPLATE_VARIABLES_BUDGET: Readonly<VariablesBudget> = {
  maxBytes: FIELD_LIMITS.templateVariables.max,
  maxKeys: FIELD_LIMITS.variableKeys.max,
};

/** The budget of one profile's traits (`profileTraitBytes` and `profileTraits` above). */
export const PROFILE_TRAITS_BUDGET: Readonly<VariablesBudget> = {
  maxBytes: FIELD_LIMITS.profileTraitBytes.max,
  maxKeys: FIELD_LIMITS.profileTraits.max,
};

/** Longest `Name <address>` string: a quoted name of the longest, a space, and the bracketed address. */
export const MAX_MAILBOX_LENGTH = FIELD_LIMITS.name.max + FIELD_LIMITS.address.max + 5;

/** The names of {@link FIELD_LIMITS}. */
export type FieldLimitName = keyof typeof FIELD_LIMITS;

/**
 * Bytes a request body may hold, per endpoint: larger is a 413 before the body is parsed. The send
 * endpoints carry inline attachments, so theirs is the HTTP handler's `bodyLimit` (10 MiB unless the app
 * sets another); every other route's is the smaller of `bodyLimit` and `other`.
 */
export const REQUEST_BODY_LIMITS = {
  /** `POST /send/mail`: the default of the handler's `bodyLimit`. */
  send: 10 * MIB,
  /** `POST /send/mail/broadcast`, initial and later batches: the default of `bodyLimit`. */
  broadcast: 10 * MIB,
  /**
   * `POST /templates`, `PUT /templates/:ref` and their validate and preview: a template source of up to
   * 1 MiB (`MAX_TEMPLATE_SOURCE_BYTES`, refused as a field past it) with room for its JSON escaping.
   */
  template: 2 * MIB,
  /** Every other route with a body (reschedule, webhooks, domains, provider notifications, ...). */
  other: MIB,
} as const;
