/**
 * Reads an inbound message (the bytes mailed to the bounce domain) with `mailparser` and says what it is:
 * an RFC 3464 DSN, an RFC 5965 ARF complaint, a plain-text bounce, an auto-reply, or nothing to act on.
 */
import type { Attachment, ParsedMail } from 'mailparser';
import { autoReplyReason } from './auto-reply.js';
import type { BounceClass, BounceRecipient, InboundReport } from './inbound-report.js';
import {
  addressField,
  cleanAddress,
  type FieldGroup,
  fieldGroups,
  headerBlock,
  messageIdField,
  oneLine,
  statusCodeIn,
} from './report-fields.js';
import { readTextBounce } from './text-bounce.js';

const RETURNED_HEADERS = [
  'message/rfc822',
  'text/rfc822-headers',
  'message/rfc822-headers',
  'message/global',
];

/** Parses and classifies `raw`. Rejects only when the bytes are not a message mailparser can read at all. */
export async function parseInboundMessage(raw: Uint8Array): Promise<InboundReport> {
  // Loaded on first use: most processes never receive mail, and render threads must not load it.
  const { simpleParser } = await import('mailparser');
  const mail = await simpleParser(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength), {
    keepDeliveryStatus: true,
    skipHtmlToText: false,
    maxHtmlLengthToParse: 1024 * 1024,
    skipImageLinks: true,
    skipTextToHtml: true,
    skipTextLinks: true,
  });
  return classify(mail, raw);
}

/** What a parsed message is; `raw` is read for a returned message that mailparser inlined. */
export function classify(mail: ParsedMail, raw: Uint8Array): InboundReport {
  const contentType = mail.headers.get('content-type') as
    | { value?: string; params?: Record<string, string> }
    | undefined;
  const reportType =
    contentType?.value?.toLowerCase() === 'multipart/report'
      ? contentType.params?.['report-type']?.toLowerCase()
      : undefined;
  const part = (type: string) => mail.attachments.find((a) => a.contentType.toLowerCase() === type);
  const returned = mail.attachments.find((a) => RETURNED_HEADERS.includes(a.contentType.toLowerCase()));
  const returnedHeaders = returned
    ? headerBlock(returned.content.toString('utf8'))
    : inlinedReturnedHeaders(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength));

  const feedback = part('message/feedback-report');
  if (reportType === 'feedback-report' || feedback) {
    const fields = feedback
      ? (fieldGroups(feedback.content.toString('utf8'))[0] ?? new Map())
      : new Map<string, string>();
    return {
      type: 'complaint',
      feedbackType: (fields.get('feedback-type') ?? 'abuse').toLowerCase(),
      address: addressField(fields.get('original-rcpt-to')) ?? cleanOrNull(returnedHeaders?.get('to')),
      originalMessageId: messageIdField(returnedHeaders?.get('message-id')),
      originalMailFrom:
        cleanOrNull(fields.get('original-mail-from')) ?? cleanOrNull(returnedHeaders?.get('return-path')),
    };
  }

  const status = part('message/delivery-status') ?? part('message/global-delivery-status');
  if (status) {
    const recipients = dsnRecipients(status);
    if (recipients.length > 0) {
      return {
        type: 'bounce',
        format: 'dsn',
        recipients,
        originalMessageId: messageIdField(returnedHeaders?.get('message-id')),
      };
    }
  }

  const from = mail.from?.text ?? '';
  const subject = mail.subject ?? '';
  const text = mail.text ?? '';
  const textBounce = readTextBounce({
    from,
    subject,
    text,
    returnedMessageId: messageIdField(returnedHeaders?.get('message-id')),
  });
  if (textBounce) return textBounce;

  const reason = autoReplyReason({
    header: (name) => headerText(mail, name),
    subject,
    text,
  });
  if (reason) return { type: 'auto-reply', reason };
  return {
    type: 'unrecognised',
    reason: reportType
      ? `report-type ${reportType} without a readable report`
      : 'no bounce or complaint in it',
  };
}

function dsnRecipients(part: Attachment): BounceRecipient[] {
  const groups = fieldGroups(part.content.toString('utf8'));
  // The first group is per-message (Reporting-MTA...); the rest are per recipient.
  return groups.filter((g) => g.has('final-recipient') || g.has('action')).map((g) => recipientOf(g));
}

function recipientOf(g: FieldGroup): BounceRecipient {
  const action = (g.get('action') ?? '').trim().toLowerCase().split(/\s/)[0] ?? '';
  const status = statusCodeIn(g.get('status') ?? '') ?? statusCodeIn(g.get('diagnostic-code') ?? '');
  return {
    address: addressField(g.get('final-recipient')),
    originalAddress: addressField(g.get('original-recipient')),
    action,
    status,
    diagnostic: oneLine(g.get('diagnostic-code') ?? null),
    class: dsnClass(action, status),
  };
}

/** RFC 3464 section 2.3.3 and RFC 3463: `failed` with 5.x.x is hard; 4.x.x and `delayed` soft. */
function dsnClass(action: string, status: string | null): BounceClass {
  if (action === 'delivered' || action === 'relayed' || action === 'expanded') return 'delivered';
  if (action === 'delayed') return 'soft';
  if (status?.startsWith('4.')) return 'soft';
  // 5.2.2 is "mailbox full": permanent for this message, not for the address.
  if (status === '5.2.2') return 'soft';
  return 'hard';
}

function headerText(mail: ParsedMail, name: string): string | undefined {
  const value = mail.headers.get(name);
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && 'value' in value && typeof value.value === 'string') return value.value;
  return String(value);
}

function cleanOrNull(value: string | undefined): string | null {
  return value ? cleanAddress(value) : null;
}

/**
 * The headers of a returned message that mailparser inlined into the text (a `message/rfc822` part with
 * `Content-Disposition: inline`, as ARF reports send it): read from the raw part, which MTAs send unencoded.
 */
function inlinedReturnedHeaders(raw: Buffer): FieldGroup | undefined {
  const text = raw.subarray(0, 256 * 1024).toString('latin1');
  const m =
    /^Content-Type:[ \t]*(?:message\/rfc822|text\/rfc822-headers|message\/rfc822-headers)\b[^\n]*\n(?:[ \t][^\n]*\n|[A-Za-z0-9-]+:[^\n]*\n)*\r?\n/im.exec(
      text,
    );
  if (!m) return undefined;
  return headerBlock(text.slice(m.index + m[0].length));
}
