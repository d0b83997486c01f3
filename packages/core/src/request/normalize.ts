import type { z } from 'zod';
import { MailroomError } from '../base/errors.js';
import type { InvitationSpec, Variables } from '../store/records.js';
import { checkAddress, checkMailbox } from './address.js';
import { copyVariables } from './copy-variables.js';
import { parseDateTime } from './dates.js';
import { deliveryPlanOf } from './local-time-schema.js';
import type {
  BatchRequest,
  BroadcastRequest,
  NormalizedContentRequest,
  NormalizedRecipient,
  NormalizedSender,
  NormalizedTemplate,
  SendRequest,
  SourceSpec,
} from './request-types.js';
import type {
  createBatchRequestSchema,
  createBroadcastRequestSchema,
  createSendRequestSchema,
  invitationSchema,
  recipientSchema,
  senderSchema,
  sourceSchema,
  templateSchema,
} from './schemas.js';
import { attachmentSpecOf, sourceSpecOf } from './schemas.js';
import { audienceSource } from './sources.js';
import { hasLineBreak, isBlankText, trimBlanks } from './text-checks.js';
import { trackOptionsOf } from './track-options.js';

/**
 * Turns a body that the schemas accepted into the one normalized shape (request-types.ts). Every
 * function here expects validated input: the checks it repeats only narrow types, and a failure means
 * a schema and this step disagree, which is an internal fault, never the caller's.
 */

type SendBody = z.output<ReturnType<typeof createSendRequestSchema>>;
type BroadcastBody = z.output<ReturnType<typeof createBroadcastRequestSchema>>;
type BatchBody = z.output<ReturnType<typeof createBatchRequestSchema>>;
type ContentBody = SendBody | BroadcastBody;
type RecipientBody = z.output<typeof recipientSchema>;

/**
 * A body whose `recipients` were checked and normalized apart (by `fastRecipients`); every other field
 * was validated by the schemas.
 */
type Rest<T> = Omit<T, 'recipients'>;

/** A validated `POST /send/mail` body as a {@link SendRequest}. */
export function normalizeSendRequest(
  body: Rest<SendBody>,
  recipients: NormalizedRecipient[] = normalizeRecipients((body as SendBody).recipients),
): SendRequest {
  return {
    ...normalizeContent(body),
    recipients,
    options: {
      acquiringAudience: optionalRef(body.options?.acquiringAudience),
      topic: optionalRef(body.options?.topic),
    },
  };
}

/** A validated initial broadcast batch as a {@link BroadcastRequest}. */
export function normalizeBroadcastRequest(
  body: Rest<BroadcastBody>,
  recipients: NormalizedRecipient[] = normalizeRecipients((body as BroadcastBody).recipients),
): BroadcastRequest {
  const scheduleFor = body.options?.scheduleFor;
  return {
    ...normalizeContent(body),
    recipients,
    sources: normalizeSources(body.sources, body.audience),
    options: {
      acquiringAudience: optionalRef(body.options?.acquiringAudience),
      scheduleFor: typeof scheduleFor === 'string' ? validDate(scheduleFor) : null,
      storeContent: body.options?.storeContent ?? null,
      topic: optionalRef(body.options?.topic),
      plan: deliveryPlanOf(body.options?.localTime, body.options?.window),
    },
  };
}

/** A validated later broadcast batch as a {@link BatchRequest}. */
export function normalizeBatchRequest(
  body: Rest<BatchBody>,
  recipients: NormalizedRecipient[] = normalizeRecipients((body as BatchBody).recipients),
): BatchRequest {
  return {
    broadcastRef: trimBlanks(body.broadcastRef),
    recipients,
    sources: normalizeSources(body.sources, body.audience),
  };
}

function normalizeContent(body: Rest<ContentBody>): NormalizedContentRequest {
  const preheader = typeof body.preheader === 'string' ? singleLine(body.preheader) : '';
  return {
    subject: typeof body.subject === 'string' ? trimBlanks(body.subject) : null,
    preheader: preheader.length > 0 ? preheader : null,
    sender: normalizeSender(body.sender),
    message: body.message ?? null,
    template: body.template ? normalizeTemplate(body.template) : null,
    replyAddress: typeof body.replyAddress === 'string' ? validAddress(body.replyAddress) : null,
    attachments: (body.attachments ?? []).map(attachmentSpecOf),
    invitation: body.invitation ? normalizeInvitation(body.invitation) : null,
    ...trackOptionsOf(body.options?.track),
  };
}

function normalizeSender(sender: z.output<typeof senderSchema>): NormalizedSender {
  if (typeof sender === 'string') return validMailbox(sender);
  return { address: validAddress(sender.address), name: optionalName(sender.name) };
}

function normalizeTemplate(template: z.output<typeof templateSchema>): NormalizedTemplate {
  return {
    ref: trimBlanks(template.ref ?? template.id ?? ''),
    variables: template.variables ? validVariables(template.variables) : {},
  };
}

/**
 * Recipients to the array form, names defaulted to the local part, duplicates (by normalized address)
 * collapsed to their first occurrence.
 */
function normalizeRecipients(
  recipients: RecipientBody | RecipientBody[] | null | undefined,
): NormalizedRecipient[] {
  if (recipients == null) return [];
  const list = Array.isArray(recipients) ? recipients : [recipients];
  const seen = new Set<string>();
  const out: NormalizedRecipient[] = [];
  for (const item of list) {
    const recipient = normalizeRecipient(item);
    if (seen.has(recipient.address)) continue;
    seen.add(recipient.address);
    out.push(recipient);
  }
  return out;
}

function normalizeRecipient(item: RecipientBody): NormalizedRecipient {
  const { address, name } =
    typeof item === 'string'
      ? validMailbox(item)
      : { address: validAddress(item.address), name: optionalName(item.name) };
  const variables = typeof item === 'string' || !item.variables ? {} : validVariables(item.variables);
  if (name !== null) return { address, name, nameGiven: true, variables };
  return { address, name: address.slice(0, address.lastIndexOf('@')), nameGiven: false, variables };
}

function normalizeSources(
  sources: Array<z.output<typeof sourceSchema>> | null | undefined,
  audience: string[] | null | undefined,
): SourceSpec[] {
  const out: SourceSpec[] = (sources ?? []).map(sourceSpecOf);
  for (const ref of audience ?? []) out.push(audienceSource(ref));
  return out;
}

function normalizeInvitation(invitation: z.output<typeof invitationSchema>): InvitationSpec {
  const out: InvitationSpec = {
    title: invitation.title,
    startDate: trimBlanks(invitation.startDate),
    endDate: trimBlanks(invitation.endDate),
  };
  if (typeof invitation.url === 'string') out.url = trimBlanks(invitation.url);
  if (typeof invitation.description === 'string') out.description = invitation.description;
  if (typeof invitation.location === 'string') out.location = invitation.location;
  return out;
}

// A blank name counts as not given, so the engine defaults it.
function optionalName(name: string | null | undefined): string | null {
  if (typeof name !== 'string') return null;
  const trimmed = trimBlanks(name);
  return trimmed.length > 0 ? trimmed : null;
}

function optionalRef(ref: string | null | undefined): string | null {
  return typeof ref === 'string' && !isBlankText(ref) ? trimBlanks(ref) : null;
}

// Preview text is one line: line breaks and NUL become spaces rather than failing the request.
function singleLine(text: string): string {
  return hasLineBreak(text) ? text.replace(/[\r\n\0\u0085\u2028\u2029]+/g, ' ').trim() : text.trim();
}

function validAddress(input: string): string {
  const result = checkAddress(input);
  if (!result.ok) throw internal('address');
  return result.address;
}

function validMailbox(input: string): NormalizedSender {
  const result = checkMailbox(input);
  if (!result.ok) throw internal('mailbox');
  return { address: result.address, name: result.name };
}

function validVariables(input: Record<string, unknown>): Variables {
  const result = copyVariables(input);
  if (!result.ok) throw internal('variables');
  return result.value;
}

function validDate(input: string): Date {
  const result = parseDateTime(input);
  if (!result.ok) throw internal('scheduleFor');
  return result.date;
}

function internal(what: string): MailroomError {
  return new MailroomError('INTERNAL', `Normalizing an unvalidated ${what}`, { source: 'request' });
}
