/**
 * A received message read and judged: its fields and attachments' metadata by mailparser, its sender's
 * SPF, DKIM, DMARC and ARC by mailauth on the connecting IP and envelope, the new text of a reply by
 * email-reply-parser (the "On ... wrote:" and "From: / Sent:" quoting of Gmail, Apple Mail, Thunderbird and
 * Outlook, and `>` quotes).
 */
import type { AddressObject, ParsedMail } from 'mailparser';
import type { DnsResolver } from '../domains/dns-lookup.js';
import { judgeMail } from './judge-mail.js';
import type { MailFields } from './mail-fields.js';
import { postalFields } from './postal-parse.js';
import type { InboundAddress, InboundMail, ReceivingEnvelope } from './receiving-types.js';

let mailparser: Promise<typeof import('mailparser')> | undefined;
let replyParser: Promise<typeof import('email-reply-parser')> | undefined;

/** What {@link parseReceived} finds; the ids, route and spam verdict are added by the caller. */
export type ParsedReceived = Omit<
  InboundMail,
  'id' | 'project_id' | 'route_id' | 'received_at' | 'spam' | 'replied_to'
>;

/** Reads and judges one message. Rejects only when the MIME cannot be read at all. */
export async function parseReceived(
  raw: Uint8Array,
  envelope: ReceivingEnvelope,
  judge: { resolver: DnsResolver; authServId: string },
): Promise<ParsedReceived> {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const [fields, auth] = await Promise.all([
    readFields(bytes),
    judgeMail(judgedBytes(bytes), envelope, judge),
  ]);
  const { text } = fields;
  return {
    envelope: {
      from: envelope.envelopeFrom,
      to: [...envelope.envelopeTo],
      remote_address: envelope.remoteAddress,
    },
    from: fields.from,
    to: fields.to,
    cc: fields.cc,
    reply_to: fields.reply_to,
    subject: fields.subject,
    date: fields.date,
    message_id: fields.message_id,
    in_reply_to: fields.in_reply_to,
    references: fields.references,
    text,
    html: fields.html,
    stripped_text:
      text === null
        ? null
        : fields.answers || REPLY_SUBJECT.test(fields.subject ?? '') || /^>/m.test(text)
          ? await strippedReply(text)
          : text.trim(),
    headers: fields.headers,
    attachments: fields.attachments,
    auth,
  };
}

/**
 * A message's fields: by postal-mime when its shape is one it reads as mailparser does (`postal-parse.ts`),
 * by mailparser otherwise.
 */
export async function readFields(bytes: Buffer): Promise<MailFields> {
  let fast: MailFields | undefined;
  try {
    fast = await postalFields(bytes);
  } catch {
    // postal-mime refuses some MIME mailparser reads (its header size and nesting limits): mailparser
    // decides, as it did before the fast path.
    fast = undefined;
  }
  return fast ?? mailparserFields(bytes);
}

/** A message's fields as mailparser reads them (any MIME it can read). */
export async function mailparserFields(bytes: Buffer): Promise<MailFields> {
  mailparser ??= import('mailparser');
  const { simpleParser } = await mailparser;
  const mail = await simpleParser(bytes, { skipImageLinks: true, skipTextLinks: true, skipTextToHtml: true });
  return {
    from: addresses(mail.from)[0] ?? null,
    to: addresses(mail.to),
    cc: addresses(mail.cc),
    reply_to: addresses(mail.replyTo),
    subject: mail.subject ?? null,
    date: mail.date && !Number.isNaN(mail.date.getTime()) ? mail.date.toISOString() : null,
    message_id: mail.messageId ?? null,
    in_reply_to: mail.inReplyTo ?? null,
    references: references(mail),
    text: mail.text ?? null,
    html: typeof mail.html === 'string' ? mail.html : null,
    headers: mail.headerLines.map((h) => [h.key, h.line.slice(h.line.indexOf(':') + 1).trim()]),
    attachments: mail.attachments.map((a) => ({
      filename: a.filename ?? null,
      content_type: a.contentType,
      size: a.size,
      content_id: a.contentId ? a.contentId.replace(/^<|>$/g, '') : null,
      url: null,
      url_expires_at: null,
    })),
    answers: Boolean(mail.inReplyTo) || Boolean(mail.references),
  };
}

/**
 * The bytes of a message's `index`th attachment, as {@link parseReceived} lists them (the same parse, so
 * the same order); undefined when it has no such attachment.
 */
export async function attachmentOf(
  raw: Uint8Array,
  index: number,
): Promise<{ filename: string | null; contentType: string; content: Uint8Array } | undefined> {
  mailparser ??= import('mailparser');
  const { simpleParser } = await mailparser;
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const mail = await simpleParser(bytes, { skipImageLinks: true, skipTextLinks: true, skipTextToHtml: true });
  const found = mail.attachments[index];
  if (!found) return undefined;
  return { filename: found.filename ?? null, contentType: found.contentType, content: found.content };
}

/**
 * A reply prefix of a subject, in the common clients' languages (`Re:`, `AW:`, `SV:`, `Antw:`, ...). The reply
 * parser runs only on a message that may quote another (it answers one, its subject says so, or a line of it
 * is quoted with `>`): a few milliseconds per message of a few KB; any other message's stripped text is its
 * whole text.
 */
const REPLY_SUBJECT = /^\s*(re|aw|sv|vs|antw|odp|ref|res|rif|r|ynt|atb|bls)(\[\d+\])?\s*:/i;

/** The text above the quoted original, trimmed; the whole text when nothing is quoted. */
export async function strippedReply(text: string): Promise<string> {
  replyParser ??= import('email-reply-parser');
  const { default: EmailReplyParser } = await replyParser;
  return new EmailReplyParser().parseReply(text).trim();
}

/** A header that signs the body: DKIM, or an ARC set (its message signature hashes the body). */
const SIGNS_BODY = /^(dkim-signature|arc-seal|arc-message-signature)[ \t]*:/im;

/**
 * What mailauth is given: the header block alone (with its blank line) when no header signs the body, the
 * whole message otherwise. Without a signature mailauth reads the body for nothing (no body hash is
 * checked): SPF takes the envelope, DMARC the From header, ARC its headers; the results are the same and a
 * 20 KB message costs mailauth a fraction of its parse (`bench/inbound-cpu.ts`).
 */
export function judgedBytes(bytes: Buffer): Buffer {
  const crlf = bytes.indexOf('\r\n\r\n');
  const lf = bytes.indexOf('\n\n');
  const end = crlf !== -1 && (lf === -1 || crlf < lf) ? crlf + 4 : lf !== -1 ? lf + 2 : -1;
  if (end === -1) return bytes;
  const head = bytes.subarray(0, end);
  return SIGNS_BODY.test(head.toString('latin1')) ? bytes : head;
}

function addresses(field: AddressObject | AddressObject[] | undefined): InboundAddress[] {
  if (!field) return [];
  const out: InboundAddress[] = [];
  for (const object of Array.isArray(field) ? field : [field]) {
    for (const entry of object.value) {
      if (entry.address) out.push({ address: entry.address, name: entry.name });
      for (const member of entry.group ?? []) {
        if (member.address) out.push({ address: member.address, name: member.name });
      }
    }
  }
  return out;
}

function references(mail: ParsedMail): string[] {
  const refs = mail.references;
  if (!refs) return [];
  return (Array.isArray(refs) ? refs : refs.split(/\s+/)).filter((r) => r.length > 0);
}
