import { TextDecoder } from 'node:util';
import Papa from 'papaparse';
import { MailroomError } from '../base/errors.js';

/** Line endings papaparse knows. */
export type CsvNewline = '\n' | '\r\n' | '\r';

/** Where a reader starts (or resumes): a row boundary of the file, and the dialect if already known. */
export interface CsvReaderStart {
  /** Byte offset of the first row to read: 0, or just after a complete row. */
  offset: number;
  /** 1-based line number of that row. */
  line: number;
  /** The delimiter, once detected (kept in the checkpoint so a resumed read parses alike). */
  delimiter: string | null;
  newline: CsvNewline | null;
}

/** One complete row. */
export interface CsvRow {
  cells: string[];
  /** 1-based line on which the row starts (a quoted field may carry it over several lines). */
  line: number;
}

/** Options of {@link CsvRowReader}. */
export interface CsvReaderOptions {
  /**
   * Characters read before guessing the dialect: papaparse takes the delimiter from the first rows and the
   * line ending from the counts of `\r` and `\n`, for which about a thousand lines are plenty. The rows of
   * these characters come out at once, as one page: 1 MiB (about 15,000 rows, and the peak of a
   * million-row import's memory) became 64 KiB. @default 64 KiB
   */
  detectChars?: number;
  /** Longest row accepted, in bytes: an unclosed quote must not make the rest of the file one row. @default 4 MiB */
  maxRowBytes?: number;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Turns byte chunks cut anywhere (byte ranges of an HTTP download) into complete CSV rows, parsed by
 * papaparse exactly as a single parse of the whole file would be, and knows the byte offset and line of
 * the row boundary after the last complete row, so a later read can resume there.
 *
 * Bytes are decoded by a streaming `TextDecoder` BEFORE papaparse sees them: fed raw byte chunks,
 * papaparse corrupts a multi-byte UTF-8 character split across two chunks. The text is parsed like
 * papaparse's own chunk streamer does (`ignoreLastRow` until the end): the incomplete last row, a
 * quoted field with line breaks included, waits for the next chunk. The byte offset of a row boundary is
 * found by counting line breaks: a boundary always follows a line-break character, and each `\n` (or
 * `\r`) character of the text is exactly one such byte of the input, invalid UTF-8 included.
 */
export class CsvRowReader {
  /** Byte offset just after the last complete row returned (where a resumed read starts). */
  offset: number;
  /** 1-based line number at {@link offset}. */
  line: number;
  delimiter: string | null;
  newline: CsvNewline | null;

  readonly #decoder: TextDecoder;
  readonly #detectChars: number;
  readonly #maxRowBytes: number;
  /** Bytes from {@link offset} on that are not part of a returned row. */
  #bytes: Buffer = Buffer.alloc(0);
  /** Decoded text of those bytes (minus the tail of a character cut in two). */
  #text = '';
  #parser: Papa.Parser | null = null;

  constructor(start: CsvReaderStart, options: CsvReaderOptions = {}) {
    this.offset = start.offset;
    this.line = start.line;
    this.delimiter = start.delimiter;
    this.newline = start.newline;
    // A byte order mark is stripped at the start of the file only; elsewhere it is data.
    this.#decoder = new TextDecoder('utf-8', { ignoreBOM: start.offset !== 0 });
    this.#detectChars = options.detectChars ?? 64 * 1024;
    this.#maxRowBytes = options.maxRowBytes ?? 4 * 1024 * 1024;
  }

  /** Bytes held back, waiting for the rest of their row. */
  get pendingBytes(): number {
    return this.#bytes.length;
  }

  /** Feeds the next chunk of bytes; returns the rows it completed. */
  push(chunk: Uint8Array): CsvRow[] {
    this.#bytes = this.#bytes.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.#bytes, chunk]);
    this.#text += this.#decoder.decode(chunk, { stream: true });
    const detecting = this.#parser === null && (this.delimiter === null || this.newline === null);
    if (detecting && this.#text.length < this.#detectChars) return [];
    const rows = this.#parse(false);
    if (this.#bytes.length > this.#maxRowBytes) {
      throw new MailroomError(
        'UNPROCESSABLE',
        `CSV row at line ${this.line} is longer than ${this.#maxRowBytes} bytes (an unclosed quote?)`,
      );
    }
    return rows;
  }

  /** Ends the input: returns the last rows, the final one without a line break included. */
  end(): CsvRow[] {
    this.#text += this.#decoder.decode();
    // Complete rows first, then the rest as the last row: a final line break ends a row, it does not
    // start an empty one (what papaparse's own streamer does, whatever the chunking).
    const rows = this.#parse(false);
    for (const row of this.#parse(true)) rows.push(row);
    return rows;
  }

  #parse(final: boolean): CsvRow[] {
    const parser = this.#parser ?? this.#start();
    const text = this.#text;
    if (text.length === 0) return [];
    const result = parser.parse(text, 0, !final) as { data: string[][]; meta: { cursor: number } };
    const consumed = final ? text.length : result.meta.cursor;
    if (consumed === 0) return [];
    const breakChar = this.newline === '\r' ? '\r' : '\n';
    const rows: CsvRow[] = [];
    let line = this.line;
    for (const cells of result.data) {
      rows.push({ cells, line });
      line += 1 + countChar(cells, breakChar);
    }
    // Advance to the boundary: the byte after the n-th line-break byte, n counted in the consumed text.
    const breaks = countInString(text, breakChar, consumed);
    const byteEnd = final
      ? this.#bytes.length
      : nthByteAfter(this.#bytes, breakChar === '\r' ? CR : LF, breaks);
    this.offset += byteEnd;
    this.line += breaks;
    this.#bytes = Buffer.from(this.#bytes.subarray(byteEnd));
    this.#text = text.slice(consumed);
    return rows;
  }

  // The dialect is guessed once, by papaparse itself, from the first `detectChars` characters.
  #start(): Papa.Parser {
    if (this.delimiter === null || this.newline === null) {
      const guess = Papa.parse<string[]>(this.#text.slice(0, this.#detectChars), { preview: 10 });
      this.delimiter ??= guess.meta.delimiter || ',';
      this.newline ??= toNewline(guess.meta.linebreak);
    }
    this.#parser = new Papa.Parser({ delimiter: this.delimiter, newline: this.newline, quoteChar: '"' });
    return this.#parser;
  }
}

function toNewline(value: string): CsvNewline {
  return value === '\r\n' || value === '\r' ? value : '\n';
}

function countChar(cells: string[], char: string): number {
  let n = 0;
  for (const cell of cells) if (cell.includes(char)) n += countInString(cell, char, cell.length);
  return n;
}

function countInString(text: string, char: string, end: number): number {
  let n = 0;
  for (let i = text.indexOf(char); i !== -1 && i < end; i = text.indexOf(char, i + 1)) n++;
  return n;
}

function nthByteAfter(bytes: Buffer, byte: number, n: number): number {
  let at = -1;
  for (let k = 0; k < n; k++) {
    at = bytes.indexOf(byte, at + 1);
    if (at === -1) throw new MailroomError('INTERNAL', 'CSV reader lost track of a line break');
  }
  return at + 1;
}
