/**
 * Reads an inbound message (the bytes mailed to the bounce domain) with `mailparser` and says what it is:
 * an RFC 3464 DSN, an RFC 5965 ARF complaint, a plain-text bounce, an auto-reply, or nothing to act on.
 */
import type { ParsedMail } from 'mailparser';
import { autoReplyReason } from './auto-reply.js';
import type { BounceClass, BounceRecipient, InboundReport } from './inbound-report.js';
import { noticeFamily } from './mta-family.js';
import {
  addressesIn,
  type NoticeBlock,
  noticeBlocks,
  replyCodeIn,
  smtpCommandIn,
  splitReturnedCopy,
} from './notice-text.js';
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
import { readSesMail } from './ses-mail.js';
import { isDaemonNotice, noticeWords, readTextBounce, type TextNotice } from './text-bounce.js';

/** How much of a message's text is read as a notice: every MTA says what failed long before this. */
const MAX_NOTICE_CHARS = 256 * 1024;

const RETURNED_HEADERS = [
  'message/rfc822',
  'text/rfc822-headers',
  'message/rfc822-headers',
  'message/global',
];

/** mailparser, once loaded (an `import()` per message goes through the module loader every time). */
let mailparser: Promise<typeof import('mailparser')> | undefined;

/** Parses and classifies `raw`. Rejects only when the bytes are not a message mailparser can read at all. */
export async function parseInboundMessage(raw: Uint8Array): Promise<InboundReport> {
  // Loaded on first use: most processes never receive mail, and render threads must not load it.
  mailparser ??= import('mailparser');
  const { simpleParser } = await mailparser;
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
  const header = (name: string) => headerText(mail, name);
  const from = mail.from?.text ?? header('from') ?? '';
  const subject = mail.subject ?? '';
  // A MIME tree mailparser could not read (a boundary folded without indentation) leaves no text: the
  // notice's words are then read from the raw body.
  const text = (mail.text?.trim() ? mail.text : rawBody(raw)).slice(0, MAX_NOTICE_CHARS);
  const family = () => noticeFamily({ header, from, subject, text });

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
  // A report whose delivery-status part a broken MIME tree or a forwarder turned into text keeps its
  // fields: read them from the text, then from the raw bytes.
  const groups = status
    ? fieldGroups(status.content.toString('utf8'))
    : inlineStatusGroups(text, Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength));
  const recipients = dsnRecipients(groups);
  if (recipients.length > 0) {
    const { own } = splitReturnedCopy(text);
    const blocks = noticeBlocks(own, [...addressesIn(from), ...addressesIn(header('to') ?? '')]);
    for (const r of recipients) withNotice(r, own, blocks, recipients.length);
    return {
      type: 'bounce',
      format: 'dsn',
      recipients,
      originalMessageId: messageIdField(returnedHeaders?.get('message-id')),
      mta: family(),
    };
  }

  const ses = readSesMail(text);
  if (ses) return ses;

  const notice: TextNotice = {
    from,
    subject,
    text,
    returnedMessageId: messageIdField(returnedHeaders?.get('message-id')),
    to: header('to') ?? '',
    failedRecipients: header('x-failed-recipients'),
    returnedTo: returnedHeaders?.get('to') ?? null,
  };
  const reason = autoReplyReason({ header, subject, text, from });
  // A person's automatic reply may mention a failure ("could not deliver"): only an MTA's own template or
  // a daemon's report makes a bounce of a message that reads as an auto-reply.
  if (reason && !isDaemonNotice(notice)) return { type: 'auto-reply', reason };
  const textBounce = readTextBounce(notice);
  if (textBounce?.type === 'bounce') return { ...textBounce, mta: family() };
  if (reason) return { type: 'auto-reply', reason };
  return {
    type: 'unrecognised',
    reason: reportType
      ? `report-type ${reportType} without a readable report`
      : 'no bounce or complaint in it',
  };
}

function dsnRecipients(groups: FieldGroup[]): BounceRecipient[] {
  // The first group is per-message (Reporting-MTA...); the rest are per recipient.
  return groups.filter((g) => g.has('final-recipient') || g.has('action')).map((g) => recipientOf(g));
}

/** The delivery-status fields of a report whose status part is not a MIME part of its own. */
function inlineStatusGroups(text: string, raw: Buffer): FieldGroup[] {
  for (const source of [text, raw.subarray(0, 256 * 1024).toString('latin1')]) {
    const groups = fieldGroups(source).filter(
      (g) => g.has('final-recipient') && (g.has('action') || g.has('status')),
    );
    if (groups.length > 0) return groups;
  }
  return [];
}

function recipientOf(g: FieldGroup): BounceRecipient {
  const action = (g.get('action') ?? '').trim().toLowerCase().split(/\s/)[0] ?? '';
  // Without a Diagnostic-Code, the Status field's comment is the reporting MTA's only explanation.
  const diagnostic = g.get('diagnostic-code') ?? /\((.+)\)/.exec(g.get('status') ?? '')?.[1] ?? '';
  const status = statusCodeIn(g.get('status') ?? '') ?? statusCodeIn(diagnostic);
  return {
    address: addressField(g.get('final-recipient')),
    originalAddress: addressField(g.get('original-recipient')),
    action,
    status,
    diagnostic: oneLine(diagnostic || null),
    class: dsnClass(action, status),
    replyCode: replyCodeIn(diagnostic.replace(/^\s*[a-z-]+\s*;/i, ' ')),
    command: diagnostic ? smtpCommandIn(diagnostic) : null,
    remoteMta: oneLine(g.get('remote-mta')?.replace(/^\s*dns\s*;\s*/i, '') ?? null),
  };
}

/**
 * Adds what the human-readable part says about `r`: the block naming its address, and for a lone
 * recipient the whole part (the reason is often written above the address). MTAs often give the remote
 * reply and the refused command only there.
 */
function withNotice(r: BounceRecipient, own: string, blocks: NoticeBlock[], count: number): void {
  const wanted = [r.address, r.originalAddress].filter(Boolean).map((a) => (a as string).toLowerCase());
  const block = blocks.find((b) => wanted.includes(b.address.toLowerCase()))?.text;
  const words = count === 1 ? own : block;
  if (!words) return;
  r.notice = noticeWords(words);
  r.command ??= smtpCommandIn(block ?? words);
  r.replyCode ??= replyCodeIn(block ?? words);
}

/** RFC 3464 section 2.3.3 and RFC 3463: `failed` with 5.x.x is hard; 4.x.x and `delayed` soft; 2.x.x delivered. */
function dsnClass(action: string, status: string | null): BounceClass {
  if (action === 'delivered' || action === 'relayed' || action === 'expanded') return 'delivered';
  // A 2.x.x status is a success whatever the action says (Postfix's address-verification reports say
  // `deliverable`).
  if (action === 'deliverable' || status?.startsWith('2.')) return 'delivered';
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

/** The body of `raw` as text (after the header block), for a message whose MIME tree is unreadable. */
function rawBody(raw: Uint8Array): string {
  const text = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength)
    .subarray(0, 256 * 1024)
    .toString('utf8');
  const end = text.search(/\r?\n\r?\n/);
  return end < 0 ? '' : text.slice(end).replace(/^--.*$|^content-[a-z-]+:.*$/gim, '');
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
