/**
 * The fast read of a received message: postal-mime (about 60 % of mailparser's CPU on the 20 KB message of
 * `bench/inbound-receive.ts`, BENCHMARKS.md "inbound40e") for the shapes where it gives exactly what mailparser gives, and nothing for
 * the rest, which mailparser reads (`parse-received.ts`). `test/receiving-postal-parse.test.ts` compares
 * both on every message of the corpora and proves that each shape where they differ is left to mailparser.
 */
import type { Address } from 'postal-mime';
import type { MailFields } from './mail-fields.js';
import type { InboundAddress } from './receiving-types.js';

let postalMime: Promise<typeof import('postal-mime')> | undefined;

/** A part of postal-mime's tree, as far as the shape check reads it (postal-mime's own, not exported). */
interface PostalNode {
  contentType: { multipart?: string | false; parsed: { value: string; params: Record<string, string> } };
  contentDisposition: { value?: string; parsed: { value: string; params: Record<string, string> } };
  contentTransferEncoding: { encoding?: string };
  childNodes: PostalNode[];
  parentNode?: PostalNode;
  headers: Array<{ key: string; value: string }>;
}

/**
 * The charsets whose text postal-mime decodes byte for byte as mailparser does (its TextDecoder and
 * mailparser's iconv agree on these); any other charset is read by mailparser.
 */
const CHARSETS = new Set(['', 'utf-8', 'utf8', 'us-ascii', 'ascii']);

/** Multiparts of the everyday structure: body alternatives, inline images, attachments. */
const MULTIPARTS = new Set(['multipart/mixed', 'multipart/alternative', 'multipart/related']);

/**
 * The message's fields when its shape is one postal-mime reads as mailparser does, undefined otherwise.
 * The shape: at most one text/plain part and one text/html part, the HTML an alternative of the text, in
 * mixed, alternative and related multiparts, in UTF-8 or US-ASCII, not flowed; attachments in base64 (their
 * bytes then do not depend on line ends), none a message or a calendar; a valid Date; header lines whose
 * names are plain; lines {@link plainLines} accepts. `anyShape` (for the tests that show where the two
 * differ): whatever the shape. Throws what postal-mime throws (its nesting and header size limits).
 */
export async function postalFields(
  bytes: Uint8Array,
  options: { anyShape?: boolean } = {},
): Promise<MailFields | undefined> {
  // The line checks first: a message they refuse is not parsed twice.
  if (!options.anyShape && !plainLines(bytes)) return undefined;
  postalMime ??= import('postal-mime');
  const { default: PostalMime } = await postalMime;
  const parser = new PostalMime({ attachmentEncoding: 'arraybuffer' });
  const email = await parser.parse(bytes);
  const root = (parser as unknown as { root: PostalNode }).root;
  if (!options.anyShape && !(plainShape(root) && plainHeaders(email.headerLines))) return undefined;
  const { decodeWords } = await postalMime;
  const date = email.date === undefined ? undefined : new Date(email.date);
  // mailparser stamps a message without a (valid) Date with the time of the parse.
  if (!date || Number.isNaN(date.getTime())) return undefined;
  const header = (key: string) => root.headers.find((h) => h.key === key)?.value;
  const references = root.headers
    .filter((h) => h.key === 'references')
    .flatMap((h) => decodeWords(h.value).split(/\s+/))
    .map(bracketed)
    .filter((r): r is string => r !== false);
  const messageId = header('message-id');
  const inReplyTo = header('in-reply-to');
  return {
    from: addresses(email.from ? [email.from] : undefined)[0] ?? null,
    to: addresses(email.to),
    cc: addresses(email.cc),
    reply_to: addresses(email.replyTo),
    subject: email.subject ?? null,
    date: date.toISOString(),
    message_id: messageId === undefined ? null : bracketed(decodeWords(messageId)) || null,
    in_reply_to: inReplyTo === undefined ? null : bracketed(decodeWords(inReplyTo)) || null,
    references,
    text: bodyText(root, 'text/plain', email.text),
    html: bodyText(root, 'text/html', email.html),
    // mailparser keeps a folded header's line breaks as CRLF whatever the message's line ends were.
    headers: email.headerLines.map((h) => [
      h.key,
      h.line
        .slice(h.line.indexOf(':') + 1)
        .trim()
        .replace(/\n/g, '\r\n'),
    ]),
    attachments: email.attachments.map((a) => ({
      filename: a.filename ?? null,
      content_type: a.mimeType,
      size: typeof a.content === 'string' ? a.content.length : a.content.byteLength,
      content_id: a.contentId ? a.contentId.replace(/^<|>$/g, '') : null,
      url: null,
      url_expires_at: null,
    })),
    // As mailparser's: an In-Reply-To with an id, or any References header (even one without an id).
    answers:
      (inReplyTo !== undefined && bracketed(decodeWords(inReplyTo)) !== false) ||
      root.headers.some((h) => h.key === 'references'),
  };
}

/**
 * A text part's text as mailparser gives it: its line ends LF, and without the line break before the
 * boundary that ends it (MIME's: it belongs to the boundary; postal-mime keeps it as the part's last line
 * end). A quoted-printable part whose last line is a soft break has no such line end in postal-mime's text
 * either: its text then does not end with a line break, unless it ends with an encoded one followed by the
 * soft break (`=0A=`), which {@link plainLines} leaves to mailparser.
 */
function bodyText(root: PostalNode, type: string, text: string | undefined): string | null {
  if (text === undefined) return null;
  const part = inlinePart(root, type);
  let out = text;
  if (part?.parentNode && part.contentTransferEncoding.encoding !== 'base64' && out.endsWith('\n'))
    out = out.slice(0, -1);
  out = out.replace(/\r?\n/g, '\n');
  return out.length > 0 ? out : null;
}

/** The first inline part of `type` (text/plain or text/html) in the tree. */
function inlinePart(node: PostalNode, type: string): PostalNode | undefined {
  if (!node.contentType.multipart) {
    return node.contentType.parsed.value === type && node.contentDisposition.parsed.value !== 'attachment'
      ? node
      : undefined;
  }
  for (const child of node.childNodes) {
    const found = inlinePart(child, type);
    if (found) return found;
  }
  return undefined;
}

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;

/**
 * Whether the message's lines read the same in both parsers: its header block is 7-bit (mailparser's
 * header lines read 8-bit bytes as Latin-1, its fields as UTF-8), it ends with a line break (SMTP's always
 * does), no CR stands alone (postal-mime drops every CR at a line's end, mailparser one), no line ends in
 * a space or tab (mailparser drops those of a quoted-printable line, postal-mime keeps them), and no
 * quoted-printable line ends in an encoded line break and a soft break (see {@link bodyText}).
 */
function plainLines(bytes: Uint8Array): boolean {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = buf.length;
  if (n === 0 || buf[n - 1] !== LF) return false;
  // Native scans: a byte loop in JS cost ~0.1 ms a 20 KB message (`--cpu-prof` of `inbound-receive`), these ~15 µs.
  const blankCrlf = buf.indexOf('\r\n\r\n');
  const blankLf = buf.indexOf('\n\n');
  const headerEnd =
    blankCrlf !== -1 && (blankLf === -1 || blankCrlf < blankLf) ? blankCrlf : blankLf === -1 ? n : blankLf;
  for (let i = 0; i < headerEnd; i++) if ((buf[i] as number) > 0x7f) return false;
  for (let lf = buf.indexOf(LF); lf !== -1; lf = buf.indexOf(LF, lf + 1)) {
    const last = buf[lf - 1] === CR ? buf[lf - 2] : buf[lf - 1];
    if (last === SPACE || last === TAB) return false;
  }
  for (let cr = buf.indexOf(CR); cr !== -1; cr = buf.indexOf(CR, cr + 2)) {
    if (buf[cr + 1] !== LF) return false;
  }
  return buf.indexOf(ENCODED_LF_SOFT[0] as Buffer) === -1 && buf.indexOf(ENCODED_LF_SOFT[1] as Buffer) === -1;
}

/** A quoted-printable encoded line break before a soft one (see {@link bodyText}). */
const ENCODED_LF_SOFT = [Buffer.from('=0A='), Buffer.from('=0a=')];

/** A field name as RFC 5322 has it: printable ASCII but the colon. */
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;

/**
 * Whether every header line of the message is `name: value` with a plain field name: mailparser and
 * postal-mime read other lines (an mbox `From ` line, a name with spaces) differently.
 */
function plainHeaders(lines: Array<{ key: string; line: string }>): boolean {
  return lines.every((h) => {
    const colon = h.line.indexOf(':');
    return colon > 0 && FIELD_NAME.test(h.line.slice(0, colon));
  });
}

/** A message id in angle brackets, as mailparser gives it (false for an empty one, as mailparser). */
function bracketed(value: string): string | false {
  const id = value.trim();
  if (id.length === 0) return false;
  return `${id.startsWith('<') ? '' : '<'}${id}${id.endsWith('>') ? '' : '>'}`;
}

/** The mailboxes of a header's addresses, groups' members in their place (as mailparser's are read). */
function addresses(list: Address[] | undefined): InboundAddress[] {
  const out: InboundAddress[] = [];
  for (const entry of list ?? []) {
    if (entry.group) {
      for (const member of entry.group)
        if (member.address) out.push({ address: member.address, name: member.name });
    } else if (entry.address) out.push({ address: entry.address, name: entry.name });
  }
  return out;
}

/** Whether the tree under `root` is of the shape {@link postalFields} reads. */
function plainShape(root: PostalNode): boolean {
  let plain: PostalNode | undefined;
  let html: PostalNode | undefined;
  const walk = (node: PostalNode): boolean => {
    const type = node.contentType.parsed.value;
    if (node.contentType.multipart) {
      if (!MULTIPARTS.has(type)) return false;
      return node.childNodes.every(walk);
    }
    const disposition = node.contentDisposition.parsed.value;
    if (disposition !== '' && disposition !== 'inline' && disposition !== 'attachment') return false;
    if (type.startsWith('message/') || type.startsWith('multipart/')) return false;
    if ((type === 'text/plain' || type === 'text/html') && disposition !== 'attachment') {
      const charset = (node.contentType.parsed.params.charset ?? '').trim().toLowerCase();
      if (!CHARSETS.has(charset)) return false;
      if (node.contentType.parsed.params.format) return false;
      if (type === 'text/plain') {
        if (plain) return false;
        plain = node;
      } else {
        if (html) return false;
        html = node;
      }
      return true;
    }
    if (node.contentTransferEncoding.encoding !== 'base64') return false;
    if (type === 'text/calendar' || type === 'application/ics' || type === 'application/octet-stream')
      return false;
    return true;
  };
  if (!walk(root)) return false;
  if (html) {
    // mailparser makes a text of an HTML part that has no text alternative (html-to-text), and an HTML
    // of a text part that is not an alternative of it: only a text/plain and text/html pair of one
    // multipart/alternative reads the same.
    if (!plain) return false;
    const pair = alternativeOf(plain);
    if (!pair || pair !== alternativeOf(html)) return false;
  }
  return true;
}

/** The nearest multipart/alternative above `node`. */
function alternativeOf(node: PostalNode): PostalNode | undefined {
  for (let up = node.parentNode; up; up = up.parentNode) {
    if (up.contentType.parsed.value === 'multipart/alternative') return up;
  }
  return undefined;
}
