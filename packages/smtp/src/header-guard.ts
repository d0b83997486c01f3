/**
 * Watches the top-level header section of a message as its bytes stream in, without keeping them: the
 * inbound listener refuses a message whose header has more lines or bytes than it takes, before handing
 * it to a MIME parser that would build an object per line (100,000 header lines fit in 1 MB, far below
 * the size cap). Folded continuation lines count as lines: they cost the parser as much.
 */
export interface HeaderGuard {
  /** Feeds the next chunk; returns false once the header is over a cap (and from then on). */
  feed(chunk: Buffer): boolean;
  /** Why the header was refused, or null. */
  readonly problem: 'lines' | 'bytes' | null;
}

/** A guard for at most `maxLines` header lines and `maxBytes` header bytes. */
export function headerGuard(maxLines: number, maxBytes: number): HeaderGuard {
  let lines = 0;
  let bytes = 0;
  let lineLength = 0;
  // The last byte of the previous chunk: a CRLF may be split between two chunks.
  let previous = -1;
  let done = false;
  let problem: 'lines' | 'bytes' | null = null;
  return {
    feed(chunk) {
      if (problem) return false;
      if (done || chunk.length === 0) return true;
      let from = 0;
      while (from < chunk.length) {
        const lf = chunk.indexOf(10, from);
        const end = lf === -1 ? chunk.length : lf + 1;
        bytes += end - from;
        lineLength += end - from;
        if (bytes > maxBytes) {
          problem = 'bytes';
          return false;
        }
        if (lf === -1) break;
        const before = lf > 0 ? chunk[lf - 1] : previous;
        // An empty line (LF, or CRLF) ends the header.
        if (lineLength === 1 || (lineLength === 2 && before === 13)) {
          done = true;
          return true;
        }
        lines++;
        lineLength = 0;
        from = end;
        if (lines > maxLines) {
          problem = 'lines';
          return false;
        }
      }
      previous = chunk[chunk.length - 1] ?? -1;
      return true;
    },
    get problem() {
      return problem;
    },
  };
}
