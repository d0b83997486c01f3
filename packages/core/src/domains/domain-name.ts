import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { MailroomError } from '../base/errors.js';

/** Longest domain name in presentation form without the root dot (RFC 1035 2.3.4). */
const MAX_NAME = 253;
/** Longest label (RFC 1035 2.3.4). */
const MAX_LABEL = 63;
/** Letters, digits and hyphens, not at either end (RFC 1123 2.1), after conversion to punycode. */
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
/**
 * What a domain name may be written with before conversion: letters and digits of any script, combining
 * marks, hyphens, and the dots UTS #46 maps to `.` (ideographic and full-width). Checked first because
 * `domainToASCII` percent-decodes and cuts at `/`, so `a%2fb.com` or `a/b.com` would pass silently.
 */
const ALLOWED = /^[\p{L}\p{N}\p{M}.\-\u3002\uFF0E\uFF61]$/u;

/**
 * A sending domain in the one form the engine stores and compares: lower-case ASCII, internationalised
 * names in punycode (`münchen.de` → `xn--mnchen-3ya.de`), one trailing root dot dropped (`acme.com.` →
 * `acme.com`).
 *
 * @throws MailroomError `VALIDATION_FAILED` (issue path `['domain']`) naming the problem: empty, an IP
 * address, a character no domain has, an empty label, no dot, a label or the whole name too long, a label
 * that starts or ends with a hyphen, an all-numeric top-level label.
 * @example normalizeDomain(' Acme.COM. ') // 'acme.com'
 */
export function normalizeDomain(input: string): string {
  if (typeof input !== 'string') throw invalid(String(input), 'must be a string');
  const raw = input.trim();
  if (raw === '') throw invalid(input, 'is empty');
  const bare = raw.startsWith('[') && raw.endsWith(']') ? raw.slice(1, -1) : raw;
  if (isIP(bare) !== 0) throw invalid(raw, 'is an IP address, not a domain name');
  for (const char of raw) {
    if (!ALLOWED.test(char)) {
      throw invalid(raw, `contains ${JSON.stringify(char)}, which no domain name has`);
    }
  }
  const ascii = domainToASCII(raw);
  // WHATWG host parsing reads `0x7f.1` as 127.0.0.1: an IP address in disguise.
  if (isIP(ascii) !== 0) throw invalid(raw, `is an IP address (${ascii}), not a domain name`);
  // Such a name fails conversion (read as a malformed IPv4 address) without saying why.
  if (/(?:^|\.)[0-9]+\.?$/.test(raw))
    throw invalid(raw, 'ends in an all-numeric label, which no top-level domain is');
  if (ascii === '') throw invalid(raw, 'is not a valid internationalised domain name');
  const name = ascii.endsWith('.') ? ascii.slice(0, -1) : ascii;
  const labels = name.split('.');
  if (labels.some((label) => label === ''))
    throw invalid(raw, 'has an empty label (two dots in a row, or a dot at the start)');
  if (labels.length < 2) throw invalid(raw, 'has no dot: a sending domain looks like example.com');
  for (const label of labels) {
    if (label.length > MAX_LABEL) {
      throw invalid(raw, `has a label longer than ${MAX_LABEL} characters (${label.slice(0, 20)}...)`);
    }
    if (!LDH_LABEL.test(label)) {
      throw invalid(raw, `has a label that starts or ends with a hyphen (${label})`);
    }
  }
  if (name.length > MAX_NAME) throw invalid(raw, `is longer than ${MAX_NAME} characters`);
  return name;
}

/** Whether `name` is `domain` itself or one of its subdomains (both normalised). */
export function isWithinDomain(name: string, domain: string): boolean {
  return name === domain || name.endsWith(`.${domain}`);
}

function invalid(input: string, problem: string): MailroomError {
  const message = `The domain ${JSON.stringify(input)} ${problem}`;
  return new MailroomError('VALIDATION_FAILED', message, {
    issues: [{ code: 'custom', path: ['domain'], message }],
  });
}
