import { describe, expect, it } from 'vitest';
import { isMailroomError } from '../src/base/errors.js';
import { isWithinDomain, normalizeDomain } from '../src/domains/domain-name.js';

function refusal(input: string): string {
  try {
    normalizeDomain(input);
  } catch (error) {
    if (isMailroomError(error, 'VALIDATION_FAILED')) {
      expect(error.issues?.[0]?.path).toEqual(['domain']);
      return error.message;
    }
    throw error;
  }
  throw new Error(`${input} was accepted`);
}

describe('normalizeDomain', () => {
  it.each([
    ['Acme.COM', 'acme.com'],
    ['  acme.com  ', 'acme.com'],
    ['acme.com.', 'acme.com'],
    ['News.Acme.co.uk.', 'news.acme.co.uk'],
    ['münchen.de', 'xn--mnchen-3ya.de'],
    ['MÜNCHEN.DE', 'xn--mnchen-3ya.de'],
    ['xn--mnchen-3ya.de', 'xn--mnchen-3ya.de'],
    ['例え.テスト', 'xn--r8jz45g.xn--zckzah'],
    ['例え。テスト', 'xn--r8jz45g.xn--zckzah'],
    ['a-b.example', 'a-b.example'],
  ])('%s → %s', (input, expected) => {
    expect(normalizeDomain(input)).toBe(expected);
  });

  it.each([
    ['', /is empty/],
    ['   ', /is empty/],
    ['192.0.2.1', /is an IP address/],
    ['[2001:db8::1]', /is an IP address/],
    ['2001:db8::1', /is an IP address/],
    ['0x7f.1', /is an IP address \(127\.0\.0\.1\)/],
    ['localhost', /has no dot/],
    ['acme', /has no dot/],
    ['acme.', /has no dot/],
    ['acme..com', /empty label/],
    ['.acme.com', /empty label/],
    ['acme.com..', /empty label/],
    ['-acme.com', /starts or ends with a hyphen/],
    ['acme-.com', /starts or ends with a hyphen/],
    [`${'a'.repeat(64)}.com`, /label longer than 63/],
    [`${'abcdefghi.'.repeat(26)}com`, /longer than 253/],
    ['a_b.com', /contains "_"/],
    ['a/b.com', /contains "\/"/],
    ['a%2fb.com', /contains "%"/],
    ['ann@acme.com', /contains "@"/],
    ['acme com', /contains " "/],
    ['xn--a.com', /not a valid internationalised/],
    ['acme.123', /ends in an all-numeric label/],
    ['1.2.3', /is an IP address \(1\.2\.0\.3\)/],
  ])('refuses %j clearly', (input, message) => {
    expect(refusal(input)).toMatch(message);
  });

  it('names the input in the message', () => {
    expect(refusal('10.0.0.1')).toBe('The domain "10.0.0.1" is an IP address, not a domain name');
  });
});

describe('isWithinDomain', () => {
  it('is the domain or a subdomain, label-wise', () => {
    expect(isWithinDomain('acme.com', 'acme.com')).toBe(true);
    expect(isWithinDomain('bounces.acme.com', 'acme.com')).toBe(true);
    expect(isWithinDomain('notacme.com', 'acme.com')).toBe(false);
    expect(isWithinDomain('acme.com.evil.net', 'acme.com')).toBe(false);
  });
});
