import { describe, expect, it } from 'vitest';
import { headerGuard } from '../src/header-guard.js';

/** The streaming header cap of the inbound listener, fed in chunks cut anywhere. */

function feedAll(message: string, chunkSize: number, maxLines: number, maxBytes: number) {
  const guard = headerGuard(maxLines, maxBytes);
  const bytes = Buffer.from(message);
  let ok = true;
  for (let i = 0; i < bytes.length && ok; i += chunkSize) ok = guard.feed(bytes.subarray(i, i + chunkSize));
  return { ok, problem: guard.problem };
}

describe('headerGuard', () => {
  const header = (lines: number) => 'X-A: 1\r\n'.repeat(lines);

  it('takes a header of exactly the cap, however the chunks cut its CRLFs', () => {
    for (const size of [1, 2, 3, 7, 64, 4096]) {
      expect(feedAll(`${header(10)}\r\nbody\r\nX-Not-A-Header: 1\r\n`.repeat(1), size, 10, 1000)).toEqual({
        ok: true,
        problem: null,
      });
    }
  });

  it('refuses one line past the cap, and a header past its bytes', () => {
    for (const size of [1, 5, 4096]) {
      expect(feedAll(`${header(11)}\r\nbody`, size, 10, 1000).problem).toBe('lines');
      expect(feedAll(`X-Long: ${'a'.repeat(2000)}\r\n\r\nbody`, size, 10, 1000).problem).toBe('bytes');
    }
  });

  it('counts nothing after the blank line: a long body is no header', () => {
    expect(feedAll(`${header(2)}\r\n${'line\r\n'.repeat(5000)}`, 100, 10, 1000)).toEqual({
      ok: true,
      problem: null,
    });
    // A bare LF ends the header too.
    expect(feedAll(`X-A: 1\n\n${'line\n'.repeat(5000)}`, 3, 10, 1000)).toEqual({ ok: true, problem: null });
  });

  it('refuses 100,000 header lines after reading only past the cap', () => {
    const guard = headerGuard(1000, 64 * 1024);
    const chunk = Buffer.from(header(500));
    let fed = 0;
    while (guard.feed(chunk)) fed++;
    expect(guard.problem).toBe('lines');
    expect(fed).toBe(2);
  });
});
