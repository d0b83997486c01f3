import { createRequire } from 'node:module';
import fc from 'fast-check';
import type PapaType from 'papaparse';
import { describe, expect, it } from 'vitest';
import { type CsvRow, CsvRowReader } from '../packages/core/src/sources/csv-row-reader.js';

// papaparse is a dependency of the core package, not of the workspace root: load it from there.
const Papa = createRequire(new URL('../packages/core/package.json', import.meta.url))(
  'papaparse',
) as typeof PapaType;

const encoder = new TextEncoder();

/** The reference: papaparse on the whole file at once (decoded in one go, BOM stripped). */
function referenceRows(bytes: Uint8Array): string[][] {
  const text = new TextDecoder().decode(bytes);
  return nonBlank(Papa.parse<string[]>(text).data);
}

/** Blank lines are not rows (papaparse gives `['']` for one; its own streamer drops a trailing one). */
function nonBlank(rows: string[][]): string[][] {
  return rows.filter((r) => !(r.length === 1 && r[0] === ''));
}

/** Reads `bytes` in chunks of `size` bytes from `offset`, resuming a reader's state. */
function readChunked(
  bytes: Uint8Array,
  size: number,
  start = {
    offset: 0,
    line: 1,
    delimiter: null as string | null,
    newline: null as '\n' | '\r\n' | '\r' | null,
  },
  stopAt = bytes.length,
): { rows: CsvRow[]; reader: CsvRowReader } {
  const reader = new CsvRowReader(start, { detectChars: 1 << 20 });
  const rows: CsvRow[] = [];
  for (let at = start.offset; at < stopAt; at += size) {
    rows.push(...reader.push(bytes.subarray(at, Math.min(at + size, stopAt))));
  }
  if (stopAt === bytes.length) rows.push(...reader.end());
  return { rows, reader };
}

// Fields mixing ASCII, 2-, 3- and 4-byte UTF-8, quotes, delimiters and line breaks of both kinds.
const fieldChar = fc.constantFrom(
  'a',
  'b',
  'Z',
  '0',
  ' ',
  ',',
  '"',
  '\n',
  '\r\n',
  'é',
  'ß',
  'ж',
  '中',
  '€',
  '😀',
  '🇫🇷',
  '=',
  '+',
  ';',
  '\t',
);
const field = fc.array(fieldChar, { maxLength: 8 }).map((parts) => parts.join(''));
const csvDoc: fc.Arbitrary<CsvDoc> = fc.record({
  rows: fc.array(fc.array(field, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 12 }),
  newline: fc.constantFrom('\n', '\r\n'),
  trailingNewline: fc.boolean(),
  bom: fc.boolean(),
  quoteAll: fc.boolean(),
});

type CsvDoc = {
  rows: string[][];
  newline: string;
  trailingNewline: boolean;
  bom: boolean;
  quoteAll: boolean;
};

function serialize(doc: CsvDoc): Uint8Array {
  const quote = (f: string) =>
    doc.quoteAll || /[",\r\n]/.test(f) || f === '' ? `"${f.replace(/"/g, '""')}"` : f;
  const text =
    doc.rows.map((r) => r.map(quote).join(',')).join(doc.newline) + (doc.trailingNewline ? doc.newline : '');
  const body = encoder.encode(text);
  if (!doc.bom) return body;
  const out = new Uint8Array(body.length + 3);
  out.set([0xef, 0xbb, 0xbf]);
  out.set(body, 3);
  return out;
}

/** Line of each row of a well-formed document: 1 + the line breaks before it, inside fields included. */
function expectedLines(doc: CsvDoc): number[] {
  const lines: number[] = [];
  let line = 1;
  for (const row of doc.rows) {
    lines.push(line);
    line += 1 + row.reduce((n, f) => n + (f.match(/\n/g)?.length ?? 0), 0);
  }
  return lines;
}

describe('chunked CSV reading', () => {
  it('gives the rows of a single papaparse parse for every chunk size, 1 byte to the whole file', () => {
    fc.assert(
      fc.property(csvDoc, (doc) => {
        const bytes = serialize(doc);
        const expected = referenceRows(bytes);
        for (let size = 1; size <= bytes.length; size++) {
          const { rows } = readChunked(bytes, size);
          expect(nonBlank(rows.map((r) => r.cells))).toEqual(expected);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('agrees with a single parse on malformed input too: stray quotes, lone CR, unclosed fields', () => {
    const junk = fc.array(fc.constantFrom('a', '"', ',', ';', '\n', '\r\n', '\r', 'é', '😀', ' '), {
      maxLength: 60,
    });
    fc.assert(
      fc.property(junk, (parts) => {
        const bytes = encoder.encode(parts.join(''));
        const expected = referenceRows(bytes);
        for (let size = 1; size <= bytes.length; size++) {
          expect(nonBlank(readChunked(bytes, size).rows.map((r) => r.cells))).toEqual(expected);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('reports the line each row starts on, quoted line breaks included', () => {
    fc.assert(
      fc.property(csvDoc, fc.integer({ min: 1, max: 64 }), (doc, size) => {
        // The dialect is given: a guessed tab or semicolon would cut these rows differently.
        const bytes = serialize(doc);
        const dialect = { offset: 0, line: 1, delimiter: ',', newline: doc.newline as '\n' | '\r\n' };
        const { rows } = readChunked(bytes, size, dialect);
        expect(rows.map((r) => r.line)).toEqual(expectedLines(doc));
      }),
      { numRuns: 300 },
    );
  });

  it('resumes at the checkpointed row boundary with the same rows and lines as an uninterrupted read', () => {
    fc.assert(
      fc.property(
        csvDoc,
        fc.integer({ min: 1, max: 64 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (doc, size, cut) => {
          const bytes = serialize(doc);
          const whole = readChunked(bytes, size).rows;
          // Crash somewhere: read up to an arbitrary byte, keep only the reader's checkpoint.
          const first = readChunked(bytes, size, undefined, Math.floor(cut * bytes.length));
          const { offset, line, delimiter, newline } = first.reader;
          const rest = readChunked(bytes, size, { offset, line, delimiter, newline }).rows;
          expect([...first.rows, ...rest]).toEqual(whole);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps a multi-byte character split across chunks intact, where raw papaparse chunks do not', () => {
    const bytes = encoder.encode('address,name\nzoe@example.test,Zoë 中文 😀\n');
    const rows = readChunked(bytes, 1).rows.map((r) => r.cells);
    expect(rows).toEqual([
      ['address', 'name'],
      ['zoe@example.test', 'Zoë 中文 😀'],
    ]);
  });

  it('refuses a row longer than the cap instead of buffering the rest of the file', () => {
    const reader = new CsvRowReader(
      { offset: 0, line: 1, delimiter: ',', newline: '\n' },
      { maxRowBytes: 1024 },
    );
    reader.push(encoder.encode('address,name\n"unclosed quote'));
    expect(() => reader.push(new Uint8Array(2048).fill(0x61))).toThrow(/line 2 is longer than 1024 bytes/);
  });
});
