import type { AttachmentSpec } from '../store/records.js';
import { hasLineBreak, isBlankText, trimBlanks } from './text-checks.js';

/**
 * Attachments as the clients send them: `{ name?, url }` or `{ name?, content }`, where `content` is
 * raw base64 (Dart) or a `data:<type>;base64,<data>` URI (TypeScript). They become an
 * {@link AttachmentSpec}: a file name with an extension, a content type from that extension, and
 * either plain base64 or an http(s) URL to fetch later through the guarded fetcher.
 */

/** An attachment as it arrives, after zod has checked the field types. */
export interface AttachmentInput {
  name?: string | null | undefined;
  url?: string | null | undefined;
  content?: string | null | undefined;
}

/** A problem with one field of an attachment (path relative to the attachment). */
export interface FieldProblem {
  path: string[];
  message: string;
}

/** The outcome of resolving an attachment, without throwing. */
export type AttachmentCheck =
  | { ok: true; attachment: AttachmentSpec }
  | { ok: false; problems: FieldProblem[] };

/** The content type used when neither the extension nor a data URI names one. */
export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/** Content types by lower-case file extension: the common attachment kinds, nothing exotic. */
export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  bmp: 'image/bmp',
  ico: 'image/vnd.microsoft.icon',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  heic: 'image/heic',
  txt: 'text/plain',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  htm: 'text/html',
  html: 'text/html',
  css: 'text/css',
  md: 'text/markdown',
  xml: 'application/xml',
  ics: 'text/calendar',
  vcf: 'text/vcard',
  json: 'application/json',
  zip: 'application/zip',
  gz: 'application/gzip',
  tar: 'application/x-tar',
  '7z': 'application/x-7z-compressed',
  rar: 'application/vnd.rar',
  rtf: 'application/rtf',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  odp: 'application/vnd.oasis.opendocument.presentation',
  epub: 'application/epub+zip',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  ogg: 'audio/ogg',
  m4a: 'audio/mp4',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
  avi: 'video/x-msvideo',
};

/** The content type for a file name, from its extension; `fallback` when the extension is unknown. */
export function contentTypeFor(filename: string, fallback = DEFAULT_CONTENT_TYPE): string {
  const ext = extensionOf(filename);
  return (ext !== null ? CONTENT_TYPES[ext.toLowerCase()] : undefined) ?? fallback;
}

/** True when `text` is strict base64: the standard alphabet, length a multiple of 4, `=` only as padding. */
export function isStrictBase64(text: string): boolean {
  return text.length % 4 === 0 && BASE64.test(text);
}

/** True when `text` parses as an absolute `http:` or `https:` URL with a host. */
export function isHttpUrl(text: string): boolean {
  if (hasLineBreak(text)) return false;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
}

/** Checks one attachment and turns it into an {@link AttachmentSpec}, collecting every problem. */
export function resolveAttachment(input: AttachmentInput): AttachmentCheck {
  const problems: FieldProblem[] = [];
  const hasUrl = typeof input.url === 'string';
  const hasContent = typeof input.content === 'string';
  if (hasUrl && hasContent) {
    problems.push({ path: ['content'], message: 'Give either url or content, not both' });
    return { ok: false, problems };
  }
  if (!hasUrl && !hasContent) {
    problems.push({ path: ['url'], message: 'Either url or content is required' });
    return { ok: false, problems };
  }
  let url: string | undefined;
  let contentBase64: string | undefined;
  let dataType: string | null = null;
  if (typeof input.url === 'string') {
    url = trimBlanks(input.url);
    if (!isHttpUrl(url)) problems.push({ path: ['url'], message: 'Must be an absolute http(s) URL' });
  } else if (typeof input.content === 'string') {
    const decoded = decodeContent(input.content);
    if (decoded.ok) {
      contentBase64 = decoded.base64;
      dataType = decoded.mediaType;
    } else {
      problems.push({ path: ['content'], message: decoded.reason });
    }
  }
  const filename = resolveFilename(input.name, url, problems);
  if (problems.length > 0 || filename === null) return { ok: false, problems };
  const attachment: AttachmentSpec = {
    filename,
    contentType: contentTypeFor(filename, dataType ?? undefined),
  };
  if (contentBase64 !== undefined) attachment.contentBase64 = contentBase64;
  if (url !== undefined) attachment.url = url;
  return { ok: true, attachment };
}

type Decoded = { ok: true; base64: string; mediaType: string | null } | { ok: false; reason: string };

function decodeContent(content: string): Decoded {
  if (content.length === 0) return { ok: false, reason: 'Must not be empty' };
  if (!/^data:/i.test(content)) {
    return isStrictBase64(content)
      ? { ok: true, base64: content, mediaType: null }
      : { ok: false, reason: 'Must be base64 (A-Z, a-z, 0-9, +, /, = padding) or a data URI' };
  }
  const comma = content.indexOf(',');
  if (comma === -1) return { ok: false, reason: 'A data URI must have a comma before its data' };
  const params = content.slice(5, comma).split(';');
  if (params.length < 2 || params[params.length - 1]?.toLowerCase() !== 'base64') {
    return { ok: false, reason: 'A data URI must be base64-encoded (data:<type>;base64,<data>)' };
  }
  const data = content.slice(comma + 1);
  if (data.length === 0) return { ok: false, reason: 'The data URI holds no data' };
  if (!isStrictBase64(data)) {
    return { ok: false, reason: 'The data of the data URI must be base64 (A-Z, a-z, 0-9, +, /, = padding)' };
  }
  const type = params[0]?.trim().toLowerCase() ?? '';
  return { ok: true, base64: data, mediaType: MEDIA_TYPE.test(type) ? type : null };
}

function resolveFilename(name: string | null | undefined, url: string | undefined, problems: FieldProblem[]) {
  if (typeof name === 'string' && !isBlankText(name)) {
    const filename = trimBlanks(name);
    const problem = filenameProblem(filename);
    if (problem) {
      problems.push({ path: ['name'], message: problem });
      return null;
    }
    return filename;
  }
  const derived = url !== undefined ? lastPathSegment(url) : null;
  if (derived !== null && filenameProblem(derived) === null) return derived;
  problems.push({
    path: ['name'],
    message:
      url !== undefined
        ? 'Required when the URL path does not end in a file name with an extension (for example report.pdf)'
        : 'Required with content: a file name with an extension (for example report.pdf)',
  });
  return null;
}

function filenameProblem(filename: string): string | null {
  if (hasLineBreak(filename)) return 'Must not contain line breaks or NUL';
  if (filename.includes('/') || filename.includes('\\')) return 'Must be a file name, not a path';
  if (extensionOf(filename) === null) return 'Must include the file extension (for example report.pdf)';
  return null;
}

function extensionOf(filename: string): string | null {
  const dot = filename.lastIndexOf('.');
  if (dot <= 0) return null;
  const ext = filename.slice(dot + 1);
  return EXTENSION.test(ext) ? ext : null;
}

function lastPathSegment(url: string): string | null {
  let pathname: string;
  try {
    pathname = new URL(url).pathname;
  } catch {
    return null;
  }
  const segment = pathname.slice(pathname.lastIndexOf('/') + 1);
  if (segment.length === 0) return null;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

// Anchored, single character class with one quantifier: linear whatever the input.
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const EXTENSION = /^[A-Za-z0-9]{1,16}$/;
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;
