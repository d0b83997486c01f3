import { MailroomError } from '../base/errors.js';
import type { BaseContext } from '../context/base-context.js';
import type { CsvSourceSpec } from '../request/request-types.js';

/** The config a CSV source job carries: the request's fields plus what the probe learned of the file. */
export interface CsvSourceConfig {
  label: string;
  url: string;
  columnMappings: Record<string, string>;
  /** Total size in bytes, from the probe's `Content-Range`. */
  size: number;
  /** Strong ETag of the file when the host gave one: every range is asked `If-Range` on it. */
  etag: string | null;
  /** `Last-Modified` of the file: the `If-Range` validator when there is no strong ETag. */
  lastModified: string | null;
  /** Only rows whose contact's state for this topic allows it get a delivery (issue 38). */
  topic?: string;
}

/** The range header value `bytes <first>-<last>/<size>` of a 206, parsed. */
export interface ContentRange {
  first: number;
  last: number;
  size: number | null;
}

/**
 * Checks at accept time that a CSV source can be read in byte ranges: one `Range: bytes=0-0` request
 * through the guarded fetcher must be answered `206` with the file's size. A host that answers the whole
 * file (200) is refused, as the spec's limits require; so is one whose answer cannot be fetched.
 *
 * @throws MailroomError `UNPROCESSABLE` (no URL, no byte ranges, an HTTP error, an empty file) or
 * `FETCH_REFUSED` (the guard refused the URL, or it could not be fetched).
 */
export async function probeCsvSource(
  ctx: Pick<BaseContext, 'fetcher'>,
  source: CsvSourceSpec,
): Promise<CsvSourceConfig> {
  const label = `CSV source ${source.label}`;
  if (source.url === null) {
    throw new MailroomError('UNPROCESSABLE', `${label}: a url to the CSV file is required`);
  }
  let res: Awaited<ReturnType<typeof ctx.fetcher.fetch>>;
  try {
    res = await ctx.fetcher.fetch(source.url, { headers: { range: 'bytes=0-0' }, maxBytes: 64 * 1024 });
  } catch (error) {
    if (error instanceof MailroomError && error.code === 'FETCH_REFUSED') {
      throw new MailroomError('FETCH_REFUSED', `${label}: ${error.message}`, { cause: error });
    }
    throw error;
  }
  const { status, headers } = res;
  res.cancel();
  if (status === 200) {
    throw new MailroomError(
      'UNPROCESSABLE',
      `${label}: the host does not support byte-range downloads (it answered a Range request with the whole file); host the file where ranges work, such as S3 or R2`,
    );
  }
  if (status === 416) throw new MailroomError('UNPROCESSABLE', `${label}: the CSV file is empty`);
  if (status !== 206) {
    throw new MailroomError('UNPROCESSABLE', `${label}: the URL answered HTTP ${status}`);
  }
  const range = parseContentRange(headers['content-range']);
  if (range === null || range.size === null || range.first !== 0) {
    throw new MailroomError(
      'UNPROCESSABLE',
      `${label}: the host answered a range without the file size (Content-Range ${headers['content-range'] ?? 'missing'})`,
    );
  }
  if (isEncoded(headers['content-encoding'])) {
    throw new MailroomError(
      'UNPROCESSABLE',
      `${label}: the host compresses ranges (Content-Encoding ${headers['content-encoding']}); serve the file uncompressed`,
    );
  }
  const etag = headers.etag ?? null;
  return {
    label: source.label,
    url: source.url,
    columnMappings: source.columnMappings,
    size: range.size,
    // A weak ETag cannot validate a range (RFC 9110 13.1.5): only a strong one is kept.
    etag: etag !== null && !etag.startsWith('W/') ? etag : null,
    lastModified: headers['last-modified'] ?? null,
  };
}

/** Parses `bytes <first>-<last>/<size>` (`*` as size gives null); null when malformed. */
export function parseContentRange(value: string | undefined): ContentRange | null {
  const match = /^bytes (\d+)-(\d+)\/(\d+|\*)$/i.exec(value?.trim() ?? '');
  if (!match) return null;
  const first = Number(match[1]);
  const last = Number(match[2]);
  if (last < first) return null;
  return { first, last, size: match[3] === '*' ? null : Number(match[3]) };
}

/** True when a `Content-Encoding` other than identity is applied. */
export function isEncoded(value: string | undefined): boolean {
  return value?.split(',').some((c) => !['', 'identity'].includes(c.trim().toLowerCase())) ?? false;
}
