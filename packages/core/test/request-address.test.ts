import { describe, expect, it } from 'vitest';
import { MailroomError } from '../src/base/errors.js';
import { checkAddress, normalizeAddress, parseAddress } from '../src/request/index.js';

function rejection(run: () => unknown): MailroomError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(MailroomError);
    const failure = error as MailroomError;
    expect(failure.code).toBe('VALIDATION_FAILED');
    expect(failure.issues?.length).toBeGreaterThan(0);
    return failure;
  }
  throw new Error('expected a VALIDATION_FAILED error');
}

function reason(input: string): string {
  const result = checkAddress(input);
  if (result.ok) throw new Error(`expected ${JSON.stringify(input)} to be refused`);
  return result.reason;
}

describe('normalizeAddress', () => {
  it('lower-cases the domain only and trims surrounding spaces', () => {
    expect(normalizeAddress('Ann.Lee@Example.COM')).toBe('Ann.Lee@example.com');
    expect(normalizeAddress(' \tann@example.com \t')).toBe('ann@example.com');
    expect(normalizeAddress("o'brien+tag@mail.example.co.uk")).toBe("o'brien+tag@mail.example.co.uk");
  });

  it('keeps Unicode local parts and IDN domains', () => {
    expect(normalizeAddress('jürgen@Bücher.DE')).toBe('jürgen@bücher.de');
    expect(normalizeAddress('用户@例子.广告')).toBe('用户@例子.广告');
  });

  it.each([
    ['a@b.co\r\nBcc: x@y.co', 'CR, LF or NUL'],
    ['a@b.co\nBcc: x@y.co', 'CR, LF or NUL'],
    ['a@b.co\n', 'CR, LF or NUL'],
    ['a\0@b.co', 'CR, LF or NUL'],
    ['<a@b.co>', '< or >'],
    ['a@b.co>', '< or >'],
    ['Ann <a@b.co>', '< or >'],
    ['', 'empty'],
    ['   ', 'empty'],
    ['ann.example.com', 'an @'],
    ['a@b@c.co', 'exactly one @'],
    ['@example.com', 'local part'],
    ['ann@', 'domain after'],
    ['ann@localhost', 'must contain a dot'],
    ['ann@example..com', 'two dots'],
    ['ann@.example.com', 'dot'],
    ['ann@example.com.', 'dot'],
    ['.ann@example.com', 'dot'],
    ['ann.@example.com', 'dot'],
    ['an..n@example.com', 'two dots'],
    ['ann@-example.com', 'hyphen'],
    ['ann@exa_mple.com', 'letters, digits'],
    ['ann@1.2.3.4', 'not a number'],
    ['an n@example.com', 'spaces'],
    ['ann,bob@example.com', '","'],
    ['"ann"@example.com', '"""'],
    ['ann@[192.0.2.1]', '"["'],
    ['a\tb@example.com', 'control'],
  ])('refuses %j (%s)', (input, rule) => {
    expect(reason(input)).toContain(rule);
    const failure = rejection(() => normalizeAddress(input));
    expect(failure.issues?.[0]?.message).toContain(rule);
    expect(failure.issues?.[0]?.path).toEqual([]);
  });

  it('caps the address at 254 characters and the local part at 64', () => {
    const domain = `${'d'.repeat(61)}.${'e'.repeat(61)}.${'f'.repeat(61)}.com`;
    const fits = `${'a'.repeat(64)}@${domain}`;
    expect(fits.length).toBe(254);
    expect(normalizeAddress(fits)).toBe(fits);
    expect(reason(`a${fits}`)).toContain('254');
    expect(reason(`${'a'.repeat(65)}@example.com`)).toContain('64');
    expect(normalizeAddress(`${'a'.repeat(64)}@example.com`)).toBe(`${'a'.repeat(64)}@example.com`);
    expect(reason(`ann@${'x'.repeat(64)}.com`)).toContain('63');
  });

  it('refuses non-strings with a validation error, not a TypeError', () => {
    for (const value of [null, undefined, 42, {}, ['a@b.co']]) {
      rejection(() => normalizeAddress(value as unknown as string));
    }
  });
});

describe('parseAddress', () => {
  it.each([
    ['ann@Example.com', { address: 'ann@example.com', name: null }],
    ['Ann Lee <ann@Example.com>', { address: 'ann@example.com', name: 'Ann Lee' }],
    ['"Lee, Ann" <ann@example.com>', { address: 'ann@example.com', name: 'Lee, Ann' }],
    ['"Ann \\"The\\" Lee" <ann@example.com>', { address: 'ann@example.com', name: 'Ann "The" Lee' }],
    ['<ann@example.com>', { address: 'ann@example.com', name: null }],
    ['  Ann<ann@example.com>  ', { address: 'ann@example.com', name: 'Ann' }],
    ['Jürgen Müller <jürgen@bücher.de>', { address: 'jürgen@bücher.de', name: 'Jürgen Müller' }],
  ])('parses %j', (input, expected) => {
    expect(parseAddress(input)).toEqual(expected);
  });

  it.each([
    ['Ann <ann@example.com', '< or >'],
    ['Ann ann@example.com>', 'without an opening <'],
    ['Ann <bad>', 'an @'],
    ['Ann\r\nBcc: x@y.co <ann@example.com>', 'line breaks'],
    ['An<n <ann@example.com>', '< or >'],
    ['Ann <ann@example.com>\r\n', 'CR, LF or NUL'],
  ])('refuses %j', (input, rule) => {
    expect(rejection(() => parseAddress(input)).issues?.[0]?.message).toContain(rule);
  });
});

describe('linear time', () => {
  const size = 100_000;
  const pathological = [
    'a'.repeat(size),
    `${'a'.repeat(size)}@`,
    '@'.repeat(size),
    `${'a.'.repeat(size / 2)}@example.com`,
    `ann@${'a.'.repeat(size / 2)}com`,
    `ann@${'a-'.repeat(size / 2)}`,
    `${'<'.repeat(size)}>`,
    `${'a'.repeat(size)}<a@b.co`,
    `"${'\\"'.repeat(size / 2)}" <bad>`,
    `${' '.repeat(size)}x${' '.repeat(size)}`,
  ];

  // CPU time of this process, not the wall clock: on a loaded machine the wall clock also counts the time
  // other processes ran, while a quadratic check on 100k characters costs seconds of CPU whatever the load.
  it('refuses each 100k-character pathological input in well under 50 ms of CPU', () => {
    for (const input of pathological) {
      for (const check of [normalizeAddress, parseAddress]) {
        const started = process.cpuUsage();
        expect(() => check(input)).toThrow(MailroomError);
        const spent = process.cpuUsage(started);
        expect((spent.user + spent.system) / 1000).toBeLessThan(50);
      }
    }
  });
});
