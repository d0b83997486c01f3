import { type Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { MailroomError } from '../base/errors.js';

/** Which cap a fetch hit; carried as the `cause` of the `FETCH_REFUSED` error. */
export class FetchCapError extends Error {
  override readonly name = 'FetchCapError';
  constructor(
    /** `bytes`: the wire or the decoded body grew past `maxBytes`; `time`: `timeoutMs` passed. */
    readonly cap: 'bytes' | 'time',
    message: string,
  ) {
    super(message);
  }
}

/** True when `error` is a fetch refused because its body grew past the byte cap. */
export function isByteCapError(error: unknown): boolean {
  return (
    error instanceof MailroomError && error.cause instanceof FetchCapError && error.cause.cap === 'bytes'
  );
}

/**
 * Reads a response body to the end, undoing its `Content-Encoding` stream by stream, and stops as soon
 * as the wire bytes or the decoded bytes pass `maxBytes`: a gzip bomb never inflates past the cap, and
 * memory stays at about `maxBytes` whatever the server sends.
 */
export async function readBody(
  body: Readable,
  contentEncoding: string | undefined,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Buffer> {
  const decoders = decodersFor(contentEncoding);
  const chunks: Buffer[] = [];
  let wire = 0;
  let decoded = 0;
  const tooLarge = (what: string) =>
    new FetchCapError('bytes', `the ${what} body grew past the limit of ${maxBytes} bytes`);
  if (decoders.length === 0) {
    // Nothing to decode (most answers, every webhook receiver's): read the body as it comes, without a
    // pipeline, whose set-up and teardown (an AbortController aborted at the end, so a DOMException with
    // its stack) cost more than a short answer itself. The request's signal aborts the body on a cap.
    for await (const chunk of body as AsyncIterable<Buffer>) {
      wire += chunk.length;
      if (wire > maxBytes) {
        body.destroy();
        throw tooLarge('response');
      }
      chunks.push(chunk);
    }
    if (signal.aborted) throw signal.reason;
    return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, wire);
  }
  const countWire = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      wire += chunk.length;
      callback(wire > maxBytes ? tooLarge('response') : null, chunk);
    },
  });
  const collect = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      decoded += chunk.length;
      if (decoded > maxBytes) return callback(tooLarge('decoded'));
      chunks.push(chunk);
      callback();
    },
  });
  await pipeline([body, countWire, ...decoders, collect], { signal });
  return Buffer.concat(chunks, decoded);
}

function decodersFor(contentEncoding: string | undefined): Transform[] {
  if (contentEncoding === undefined) return [];
  const codings = contentEncoding
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length > 2) {
    throw new MailroomError('FETCH_REFUSED', `Content-Encoding ${contentEncoding}: too many layers`);
  }
  // Codings are listed in the order they were applied: undo them last first.
  return codings.reverse().map((coding) => {
    if (coding === 'gzip' || coding === 'x-gzip') return createGunzip();
    if (coding === 'deflate') return createInflate();
    if (coding === 'br') return createBrotliDecompress();
    throw new MailroomError('FETCH_REFUSED', `Content-Encoding ${coding} is not supported`);
  });
}
