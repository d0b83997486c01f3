/**
 * Builds a message's MIME bytes with plain string and Buffer operations: no streams, no random bytes per
 * message, one allocation for the result. What is identical for every recipient of a mailing (the From
 * header, the encoded attachments with their part headers) is built once and kept by the identity of the
 * objects the engine passes for every recipient (`message.from`, `message.attachments`).
 *
 * The shape is the one nodemailer's MailComposer produced: multipart/mixed (only with attachments or an
 * invitation) > multipart/alternative (text, HTML, `text/calendar; method=...`) > attachments in base64
 * with 76-character lines; an invitation is also attached as `application/ics`.
 */
import { randomBytes } from 'node:crypto';
import { domainToASCII, domainToUnicode } from 'node:url';
import { MailroomError } from '../base/errors.js';
import type { Mailbox } from '../store/records.js';
import type { OutgoingAttachment, OutgoingMessage, TextEncoding } from '../transport/transport.js';

export type { TextEncoding } from '../transport/transport.js';

/** Builds MIME messages; keeps the per-mailing parts it has built. */
export interface MimeBuilder {
  /**
   * The message as MIME bytes (CRLF line ends, ending with CRLF), unsigned. The Buffer owns its memory
   * (never a slice of a shared pool), so it can be transferred to another thread.
   * @throws MailroomError `TRANSPORT_PERMANENT` for a message that cannot be written (an invalid
   * Message-ID or header name, a header the builder writes itself).
   */
  build(message: OutgoingMessage): Buffer;
}

/** Options of {@link createMimeBuilder}. */
export interface MimeBuilderOptions {
  /**
   * Transfer encoding of text parts that need one.
   * @default 'base64'
   */
  textEncoding?: TextEncoding;
}

/** A body already in its transfer encoding: ASCII text, bytes, or base64 to be cut into lines. */
type Piece = string | Buffer | { base64: string };

/** An attachment list built once: its parts, each opened by the mixed boundary, ready to copy. */
interface BuiltAttachments {
  /** The objects the bytes were built from: a list changed in place is built again. */
  source: readonly OutgoingAttachment[];
  entries: Array<{ filename: string; contentType: string; content: Uint8Array }>;
  boundary: string;
  bytes: Buffer;
}

/** Headers the builder writes itself; a custom header may not replace them. */
const OWN_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'subject',
  'message-id',
  'date',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'content-disposition',
]);

const HEADER_NAME = /^[\x21-\x39\x3b-\x7e]+$/;
// The Message-ID goes out exactly as given (it is the delivery's identity); only a line break is refused.
const MESSAGE_ID = /^[^\r\n\0]+$/;
// RFC 5321 atext plus the non-ASCII that SMTPUTF8 (RFC 6531) adds.
const DOT_ATOM =
  /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\uffff-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\uffff-]+)*$/;
const QUOTED_STRING = /^"(?:[^"\\]|\\[\s\S])*"$/;
// An address with no special anywhere goes out bare; anything else inside angle brackets.
const PLAIN_ADDRESS = /^[^\s"(),:;<>@[\\\]]+@[^\s"(),:;<>@[\\\]]+$/;
const LOWER_DOMAIN = /^[a-z0-9.-]+$/;
const ASCII_DOMAIN = /^[A-Za-z0-9.-]+$/;
const ATOM_PHRASE = /^[\w ]*$/;
const PRINTABLE = /^[\x20-\x7e]*$/;
// What an unstructured header may carry as is: printable ASCII and tabs. `=?` would read as an encoded word.
const NEEDS_ENCODED_WORDS = /[^\x20-\x7e\t]|=\?/;
// Controls other than tab and line breaks make a text part binary, whatever its length.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
const BARE_LINE_BREAK = /\r(?!\n)|(?<!\r)\n/;
const FROM_LINE = /(?:^|\n)From /;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROLS = /[\x00-\x1f\x7f]+/g;
// What an address may not carry (nodemailer drops the same).
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const ADDRESS_NOISE = /[\x00-\x1f\x7f<>]+/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const NON_ASCII = /[^\x00-\x7f]/;
const TOKEN = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
// A media type, with parameters, that can go into the part's header as given.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTENT_TYPE = /^[\w.+-]+\/[\w.+-]+(?:\s*;\s*[\w.+-]+=(?:[\w.+-]+|"[^"\\\x00-\x1f]*"))*$/;

/** How every boundary starts. */
const BOUNDARY_MARK = '=_mr';
const TEXT_PLAIN = 'text/plain; charset=utf-8';
const TEXT_HTML = 'text/html; charset=utf-8';
const MAX_LINE = 78;
const HARD_LINE = 998;
const BASE64_LINE = 76;

/** Creates a builder with its own caches and its own boundary prefix (random once, never per message). */
export function createMimeBuilder(options: MimeBuilderOptions = {}): MimeBuilder {
  const qp = options.textEncoding === 'quoted-printable';
  const encoding = qp ? 'quoted-printable' : 'base64';
  const wordMode = qp ? 'Q' : 'B';
  // Base64 has neither `=` before its end nor `_`, and quoted-printable writes `=` only before hex
  // digits or a line break, so no encoded part holds a boundary; a 7bit part holding `=_mr` is encoded.
  const prefix = `${BOUNDARY_MARK}${randomBytes(6).toString('hex')}`;
  const alternativeBoundary = `${prefix}_a`;
  const fromLines = new WeakMap<Mailbox, { name: string; address: string; line: string }>();
  const attachmentParts = new WeakMap<readonly OutgoingAttachment[], BuiltAttachments>();
  let dateSecond = -1;
  let dateValue = '';

  function date(): string {
    const now = Date.now();
    const second = Math.floor(now / 1000);
    if (second !== dateSecond) {
      dateSecond = second;
      dateValue = new Date(second * 1000).toUTCString().replace(/GMT$/, '+0000');
    }
    return dateValue;
  }

  function fromLine(from: Mailbox): string {
    const cached = fromLines.get(from);
    if (cached && cached.name === from.name && cached.address === from.address) return cached.line;
    const line = mailboxHeader('From', from, wordMode);
    fromLines.set(from, { name: from.name, address: from.address, line });
    return line;
  }

  /** A text body in its transfer encoding, with the part headers that say which. */
  function textPart(contentType: string, text: string): { headers: string; body: Piece } {
    const bytes = Buffer.from(text, 'utf8');
    if (bytes.length === text.length && isSevenBit(text)) {
      const body = BARE_LINE_BREAK.test(text) ? text.replace(/\r\n|\r|\n/g, '\r\n') : text;
      return { headers: `Content-Type: ${contentType}\r\nContent-Transfer-Encoding: 7bit\r\n`, body };
    }
    const body: Piece = qp ? quotedPrintable(bytes) : { base64: bytes.toString('base64') };
    return { headers: `Content-Type: ${contentType}\r\nContent-Transfer-Encoding: ${encoding}\r\n`, body };
  }

  function attachments(list: readonly OutgoingAttachment[]): BuiltAttachments {
    const cached = attachmentParts.get(list);
    if (cached && sameAttachments(cached, list)) return cached;
    const encoded = list.map((a) => attachmentPart(a.filename, a.contentType, a.content));
    // A message/* part goes out unencoded (RFC 2046 5.2.1): its boundary must not occur in it.
    let boundary = `${prefix}_m`;
    while (encoded.some((e) => Buffer.isBuffer(e.body) && e.body.includes(boundary))) {
      boundary = `${BOUNDARY_MARK}${randomBytes(12).toString('hex')}_m`;
    }
    const pieces: Piece[] = [];
    for (const e of encoded) pieces.push(`--${boundary}\r\n${e.headers}\r\n`, e.body, '\r\n');
    const built: BuiltAttachments = {
      source: list,
      entries: list.map((a) => ({ filename: a.filename, contentType: a.contentType, content: a.content })),
      boundary,
      bytes: assemble(pieces),
    };
    attachmentParts.set(list, built);
    return built;
  }

  return {
    build(message) {
      if (!MESSAGE_ID.test(message.messageId)) {
        throw permanent(`invalid Message-ID ${JSON.stringify(message.messageId)}`);
      }
      let head = `${fromLine(message.from)}\r\n${mailboxHeader('To', message.to, wordMode)}\r\n`;
      if (message.replyTo)
        head += `${mailboxHeader('Reply-To', { address: message.replyTo, name: '' }, wordMode)}\r\n`;
      head += `${unstructuredHeader('Subject', message.subject, wordMode)}\r\nMessage-ID: ${message.messageId}\r\nDate: ${date()}\r\nMIME-Version: 1.0\r\n`;
      for (const name of Object.keys(message.headers)) {
        if (!HEADER_NAME.test(name)) throw permanent(`invalid header name ${JSON.stringify(name)}`);
        if (OWN_HEADERS.has(name.toLowerCase()))
          throw permanent(`header ${name} is written by the transport`);
        head += `${unstructuredHeader(name, message.headers[name] ?? '', wordMode)}\r\n`;
      }

      const text = textPart(TEXT_PLAIN, message.text);
      const html = message.html === undefined ? undefined : textPart(TEXT_HTML, message.html);
      const calendar = message.calendar;
      const calendarPart = calendar
        ? textPart(
            `text/calendar; charset=utf-8; method=${parameterValue(calendar.method)}`,
            calendar.content,
          )
        : undefined;
      const attached = message.attachments.length > 0 ? attachments(message.attachments) : undefined;

      const pieces: Piece[] = [];
      // The body: one text part, or the alternatives (text, HTML, invitation).
      let bodyHeaders: string;
      const bodyPieces: Piece[] = [];
      if (!html && !calendarPart) {
        bodyHeaders = text.headers;
        bodyPieces.push(text.body);
      } else {
        bodyHeaders = `Content-Type: multipart/alternative;\r\n boundary="${alternativeBoundary}"\r\n`;
        for (const part of [text, html, calendarPart]) {
          if (part) bodyPieces.push(`--${alternativeBoundary}\r\n${part.headers}\r\n`, part.body, '\r\n');
        }
        bodyPieces.push(`--${alternativeBoundary}--`);
      }

      if (!attached && !calendar) {
        pieces.push(`${head}${bodyHeaders}\r\n`, ...bodyPieces, '\r\n');
      } else {
        const boundary = attached?.boundary ?? `${prefix}_m`;
        pieces.push(
          `${head}Content-Type: multipart/mixed;\r\n boundary="${boundary}"\r\n\r\n`,
          `--${boundary}\r\n${bodyHeaders}\r\n`,
          ...bodyPieces,
          '\r\n',
        );
        if (attached) pieces.push(attached.bytes);
        if (calendar) {
          const ics = attachmentPart(
            calendar.filename,
            'application/ics',
            Buffer.from(calendar.content, 'utf8'),
          );
          pieces.push(`--${boundary}\r\n${ics.headers}\r\n`, ics.body, '\r\n');
        }
        pieces.push(`--${boundary}--\r\n`);
      }
      return assemble(pieces);
    },
  };
}

/**
 * An address as it goes on the wire: controls and angle brackets removed, the domain in lower case and
 * punycode (kept in Unicode when the local part is not ASCII, which needs SMTPUTF8 anyway), a local part
 * that is not a dot-atom quoted. The same rules as nodemailer's, for the headers and the envelope alike.
 */
export function wireAddress(address: string): string {
  const cleaned = address.replace(ADDRESS_NOISE, ' ').trim();
  const at = cleaned.lastIndexOf('@');
  if (at < 0) return localPart(cleaned);
  const user = cleaned.slice(0, at);
  const domain = cleaned.slice(at + 1);
  let normalized: string;
  if (LOWER_DOMAIN.test(domain) || (domain.startsWith('[') && domain.endsWith(']'))) normalized = domain;
  else if (ASCII_DOMAIN.test(domain)) normalized = domain.toLowerCase();
  else {
    const ascii = domainToASCII(domain);
    if (!ascii) normalized = domain.toLowerCase();
    else normalized = NON_ASCII.test(user) ? domainToUnicode(ascii) || ascii : ascii;
  }
  return `${localPart(user)}@${normalized}`;
}

function localPart(user: string): string {
  return DOT_ATOM.test(user) || QUOTED_STRING.test(user) ? user : quoteString(user);
}

function quoteString(value: string): string {
  return `"${value.replace(/["\\]/g, '\\$&')}"`;
}

function permanent(message: string): MailroomError {
  return new MailroomError('TRANSPORT_PERMANENT', `could not build the message: ${message}`, {
    source: 'mime',
    retryable: false,
  });
}

/** `Name: display name <address>`, folded, without the final CRLF. */
function mailboxHeader(name: string, box: Mailbox, mode: 'B' | 'Q'): string {
  const address = wireAddress(box.address);
  const displayName = box.name;
  if (!displayName) return `${name}: ${PLAIN_ADDRESS.test(address) ? address : `<${address}>`}`;
  let tokens: string[];
  if (ATOM_PHRASE.test(displayName) && displayName.trim() !== '') {
    tokens = displayName.split(' ').filter((t) => t !== '');
  } else if (PRINTABLE.test(displayName) && !displayName.includes('=?')) {
    tokens = [quoteString(displayName)];
  } else {
    // Q words in a phrase may carry fewer characters literally than in text; B is always safe there.
    tokens = encodedWords(displayName, mode === 'Q' ? 'B' : mode, MAX_LINE - name.length - 2);
  }
  tokens.push(`<${address}>`);
  return foldTokens(`${name}:`, tokens);
}

/** An unstructured header (Subject, custom ones), folded at its spaces or as encoded words. */
function unstructuredHeader(name: string, value: string, mode: 'B' | 'Q'): string {
  if (!NEEDS_ENCODED_WORDS.test(value)) {
    const folded = foldAscii(`${name}: `, value);
    if (folded !== undefined) return folded;
  }
  if (value === '') return `${name}: `;
  return foldTokens(`${name}:`, encodedWords(value, mode, MAX_LINE - name.length - 2));
}

/** Tokens joined by spaces, a line break before a token that would pass 78 characters. */
function foldTokens(start: string, tokens: string[]): string {
  let out = start;
  let column = start.length;
  for (const token of tokens) {
    if (column + 1 + token.length > MAX_LINE && column > start.length) {
      out += `\r\n ${token}`;
      column = 1 + token.length;
    } else {
      out += ` ${token}`;
      column += 1 + token.length;
    }
  }
  return out;
}

/**
 * `start + value` folded before whitespace so that lines keep to 78 characters where the value allows;
 * undefined when a run without whitespace is longer than 998 characters (then it needs encoded words).
 */
function foldAscii(start: string, value: string): string | undefined {
  const line = start + value;
  if (line.length <= MAX_LINE) return line;
  let lastText = line.length - 1;
  while (lastText > 0 && isSpace(line.charCodeAt(lastText))) lastText--;
  let out = '';
  let lineStart = 0;
  while (line.length - lineStart > MAX_LINE) {
    // A break goes before the first whitespace of a run that has text after it, past the header name.
    let best = -1;
    let firstAfter = -1;
    for (let i = Math.max(lineStart + 1, start.length); i < lastText; i++) {
      if (!isSpace(line.charCodeAt(i)) || isSpace(line.charCodeAt(i - 1))) continue;
      if (i - lineStart <= MAX_LINE) best = i;
      else {
        firstAfter = i;
        break;
      }
    }
    const cut = best > lineStart ? best : firstAfter;
    if (cut < 0) break;
    if (cut - lineStart > HARD_LINE) return undefined;
    out += `${line.slice(lineStart, cut)}\r\n`;
    lineStart = cut;
  }
  if (line.length - lineStart > HARD_LINE) return undefined;
  return out + line.slice(lineStart);
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9;
}

/**
 * RFC 2047 encoded words for `value`, each at most 75 characters (the first at most `firstMax`), never
 * splitting a character's UTF-8 bytes between two words.
 */
export function encodedWords(value: string, mode: 'B' | 'Q', firstMax: number): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const words: string[] = [];
  let max = Math.min(75, Math.max(firstMax, 24));
  let start = 0;
  while (start < bytes.length) {
    const room = max - 12;
    let end: number;
    let payload: string;
    if (mode === 'B') {
      end = Math.min(bytes.length, start + Math.floor(room / 4) * 3);
      while (end < bytes.length && end > start + 1 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
      payload = bytes.toString('base64', start, end);
    } else {
      payload = '';
      end = start;
      while (end < bytes.length) {
        const length = utf8Length(bytes[end] as number);
        let encoded = '';
        for (let i = end; i < end + length && i < bytes.length; i++) encoded += qChar(bytes[i] as number);
        if (payload.length + encoded.length > room && payload !== '') break;
        payload += encoded;
        end += length;
      }
    }
    words.push(`=?UTF-8?${mode}?${payload}?=`);
    start = end;
    max = 75;
  }
  return words;
}

function utf8Length(lead: number): number {
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  if (lead >= 0xc0) return 2;
  return 1;
}

const HEX = '0123456789ABCDEF';

/** One byte in Q encoding (RFC 2047 4.2), using only what a phrase may carry literally (5(3)). */
function qChar(byte: number): string {
  if (byte === 32) return '_';
  if (
    (byte >= 0x30 && byte <= 0x39) ||
    (byte >= 0x41 && byte <= 0x5a) ||
    (byte >= 0x61 && byte <= 0x7a) ||
    byte === 0x21 ||
    byte === 0x2a ||
    byte === 0x2b ||
    byte === 0x2d ||
    byte === 0x2f
  ) {
    return String.fromCharCode(byte);
  }
  return `=${HEX[byte >> 4]}${HEX[byte & 15]}`;
}

/**
 * A text body that may go out as is (7bit): ASCII (the caller checked), no controls, lines of at most
 * 76 characters, no line starting with `From ` (mbox readers rewrite it), nothing that could be a boundary.
 */
function isSevenBit(text: string): boolean {
  return (
    !CONTROL.test(text) && !hasLongLines(text, 76) && !FROM_LINE.test(text) && !text.includes(BOUNDARY_MARK)
  );
}

function hasLongLines(text: string, max: number): boolean {
  let start = 0;
  for (;;) {
    const lf = text.indexOf('\n', start);
    const end = lf < 0 ? text.length : lf;
    // A bare CR is a line break too once normalized; counting it as text only errs towards encoding.
    const length = end - start - (end > start && text.charCodeAt(end - 1) === 13 ? 1 : 0);
    if (length > max) return true;
    if (lf < 0) return false;
    start = lf + 1;
  }
}

/** A `Content-Type` parameter value: a token as is, anything else quoted. */
function parameterValue(value: string): string {
  if (TOKEN.test(value)) return value;
  return quoteString(value.replace(CONTROLS, ' '));
}

/**
 * An attachment's part headers and body: base64, or for message/* (which RFC 2046 forbids encoding)
 * the bytes with their line breaks made CRLF.
 */
function attachmentPart(
  filename: string,
  contentType: string,
  content: Uint8Array,
): { headers: string; body: Buffer | { base64: string } } {
  const bytes = Buffer.isBuffer(content)
    ? content
    : Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  const type = CONTENT_TYPE.test(contentType) ? contentType : 'application/octet-stream';
  const nameParameter = contentTypeName(filename);
  const headers = (cte: string) =>
    `Content-Type: ${type};${nameParameter}\r\nContent-Transfer-Encoding: ${cte}\r\nContent-Disposition: attachment;${dispositionFilename(filename)}\r\n`;
  if (/^message\//i.test(type)) {
    const raw = bytes.toString('latin1');
    const body = Buffer.from(BARE_LINE_BREAK.test(raw) ? raw.replace(/\r\n|\r|\n/g, '\r\n') : raw, 'latin1');
    return { headers: headers(NON_ASCII.test(raw) ? '8bit' : '7bit'), body };
  }
  return { headers: headers('base64'), body: { base64: bytes.toString('base64') } };
}

/** The `name` parameter of Content-Type: as is, quoted, or (non-ASCII) an encoded word, as mail clients read it. */
function contentTypeName(filename: string): string {
  if (TOKEN.test(filename) && filename.length <= 60) return ` name=${filename}`;
  if (PRINTABLE.test(filename) && filename.length <= 60) return ` name=${quoteString(filename)}`;
  return `\r\n name="${encodedWords(filename.replace(CONTROLS, ' '), 'B', 75).join(' ')}"`;
}

/** The `filename` parameter of Content-Disposition: as is, quoted, or RFC 2231 percent-encoded in pieces. */
function dispositionFilename(filename: string): string {
  if (TOKEN.test(filename) && filename.length <= 60) return ` filename=${filename}`;
  if (PRINTABLE.test(filename) && filename.length <= 60) return ` filename=${quoteString(filename)}`;
  const encoded = encodeURIComponent(filename.replace(CONTROLS, ' ')).replace(
    /['()*!]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  const pieces: string[] = [];
  let rest = `utf-8''${encoded}`;
  while (rest.length > 0) {
    let cut = Math.min(rest.length, 60);
    // Never split a %XX escape.
    const percent = rest.lastIndexOf('%', cut - 1);
    if (percent > cut - 3 && percent >= 0 && cut < rest.length) cut = percent;
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (pieces.length === 1) return `\r\n filename*=${pieces[0]}`;
  return pieces.map((p, i) => `\r\n filename*${i}*=${p}`).join(';');
}

function sameAttachments(built: BuiltAttachments, list: readonly OutgoingAttachment[]): boolean {
  if (built.source !== list || built.entries.length !== list.length) return false;
  for (let i = 0; i < list.length; i++) {
    const a = list[i] as OutgoingAttachment;
    const e = built.entries[i] as BuiltAttachments['entries'][number];
    if (a.filename !== e.filename || a.contentType !== e.contentType || a.content !== e.content) return false;
  }
  return true;
}

/**
 * Quoted-printable (RFC 2045 6.7) of UTF-8 bytes: line breaks become CRLF, lines keep to 76 characters
 * with soft breaks, trailing whitespace is encoded, and so is a line's leading `.` or the `F` of a
 * leading `From `, so that neither a relay nor an mbox reader changes the part.
 */
export function quotedPrintable(bytes: Buffer): Buffer {
  const n = bytes.length;
  const out = Buffer.allocUnsafe(n * 3 + Math.ceil((n * 3) / 72) * 3 + 3);
  let o = 0;
  let column = 0;
  for (let i = 0; i < n; i++) {
    const c = bytes[i] as number;
    if (c === 13 || c === 10) {
      if (c === 13 && bytes[i + 1] === 10) i++;
      out[o++] = 13;
      out[o++] = 10;
      column = 0;
      continue;
    }
    const next = bytes[i + 1];
    const lastOnLine = next === undefined || next === 13 || next === 10;
    let literal = (c >= 33 && c <= 126 && c !== 61) || ((c === 32 || c === 9) && !lastOnLine);
    let width = literal ? 1 : 3;
    if (column + width > (lastOnLine ? 76 : 75)) {
      out[o++] = 61;
      out[o++] = 13;
      out[o++] = 10;
      column = 0;
    }
    if (literal && column === 0 && (c === 46 || (c === 70 && startsFrom(bytes, i)))) {
      literal = false;
      width = 3;
    }
    if (literal) out[o++] = c;
    else {
      out[o++] = 61;
      out[o++] = HEX.charCodeAt(c >> 4);
      out[o++] = HEX.charCodeAt(c & 15);
    }
    column += width;
  }
  return out.subarray(0, o);
}

function startsFrom(bytes: Buffer, i: number): boolean {
  return bytes[i + 1] === 0x72 && bytes[i + 2] === 0x6f && bytes[i + 3] === 0x6d && bytes[i + 4] === 0x20;
}

/** Lines of base64 text: 76 characters, CRLF between them (none after the last). */
function base64Length(base64: string): number {
  const lines = Math.ceil(base64.length / BASE64_LINE);
  return lines === 0 ? 0 : base64.length + 2 * (lines - 1);
}

/**
 * Writes the pieces into one Buffer. Base64 is written in one native call past where its lines go, then
 * each line is moved into place (`copyWithin`, a memmove), which never overtakes the bytes still to move.
 */
function assemble(pieces: Piece[]): Buffer {
  // Strings are ASCII except a header with an SMTPUTF8 address; then they are measured and written as UTF-8.
  const utf8 = pieces.some((p) => typeof p === 'string' && NON_ASCII.test(p));
  let total = 0;
  for (const piece of pieces) {
    if (typeof piece === 'string') total += utf8 ? Buffer.byteLength(piece) : piece.length;
    else if (Buffer.isBuffer(piece)) total += piece.length;
    else total += base64Length(piece.base64);
  }
  const out = Buffer.allocUnsafeSlow(total);
  let offset = 0;
  for (const piece of pieces) {
    if (typeof piece === 'string') offset += out.write(piece, offset, utf8 ? 'utf8' : 'latin1');
    else if (Buffer.isBuffer(piece)) offset += piece.copy(out, offset);
    else offset = writeBase64Lines(out, offset, piece.base64);
  }
  return out;
}

function writeBase64Lines(out: Buffer, offset: number, base64: string): number {
  const length = base64.length;
  if (length === 0) return offset;
  const breaks = Math.ceil(length / BASE64_LINE) - 1;
  let source = offset + 2 * breaks;
  out.write(base64, source, 'latin1');
  let target = offset;
  for (let k = 0; k < breaks; k++) {
    out.copyWithin(target, source, source + BASE64_LINE);
    out[target + BASE64_LINE] = 13;
    out[target + BASE64_LINE + 1] = 10;
    target += BASE64_LINE + 2;
    source += BASE64_LINE;
  }
  out.copyWithin(target, source, offset + 2 * breaks + length);
  return offset + 2 * breaks + length;
}
