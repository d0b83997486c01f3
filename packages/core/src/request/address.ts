import { MailroomError } from '../base/errors.js';
import { hasLineBreak, trimBlanks } from './text-checks.js';

/**
 * Email address validation by a hand-written scanner: every check is one pass over at most
 * {@link MAX_ADDRESS_LENGTH} characters, after an O(1) length cap, so no input can make it backtrack.
 *
 * Accepted: a dot-atom local part (RFC 5322 `atext` plus any non-ASCII character, for SMTPUTF8) and a
 * domain of at least two dot-separated labels of letters, digits, hyphens or non-ASCII characters
 * (IDN domains are kept as written). Not accepted, on purpose: quoted local parts, comments and
 * domain literals such as `[192.0.2.1]`, which no client of this API sends.
 */

/** Longest address accepted (RFC 5321 path limit minus the angle brackets). */
export const MAX_ADDRESS_LENGTH = 254;

/** Longest local part accepted (RFC 5321). */
export const MAX_LOCAL_PART_LENGTH = 64;

/** Longest display name (in `Name <address>`, or a `name` field): field-limits.ts's `name`. */
export const MAX_DISPLAY_NAME_LENGTH = 256;

/** Longest domain label accepted (RFC 1035). */
const MAX_LABEL_LENGTH = 63;

/** The outcome of checking an address or a mailbox, without throwing. */
export type AddressCheck = { ok: true; address: string; name: string | null } | { ok: false; reason: string };

/**
 * Checks a bare address (`user@example.com`). On success `address` is normalized: surrounding spaces
 * and tabs removed, the local part as given, the domain lower-cased; `name` is always null.
 */
export function checkAddress(input: string): AddressCheck {
  const value = trimBlanks(input);
  const plain = plainAddress(value);
  if (plain !== undefined) return { ok: true, address: plain, name: null };
  return checkAddressFully(value);
}

/**
 * The rules of {@link checkAddress} one by one, each with its own message (in an order that makes the
 * likeliest mistake's message win). Exported for the tests, which compare it with the fast scan.
 * @internal
 */
export function checkAddressFully(input: string): AddressCheck {
  const value = trimBlanks(input);
  if (value.length === 0) return fail('Must not be empty');
  if (value.length > MAX_ADDRESS_LENGTH) return fail(`Must be at most ${MAX_ADDRESS_LENGTH} characters`);
  // The likeliest mistakes first, so their message wins over a space found earlier in the scan.
  if (/[\r\n\0]/.test(value)) return fail('Must not contain CR, LF or NUL');
  if (value.includes('<') || value.includes('>')) return fail('Must be a bare address without < or >');
  let at = -1;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    const problem = charProblem(code);
    if (problem) return fail(problem);
    if (code === 0x40) {
      if (at !== -1) return fail('Must contain exactly one @');
      at = i;
    }
  }
  if (at === -1) return fail('Must contain an @ between the local part and the domain');
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  const localProblem = checkLocalPart(local);
  if (localProblem) return fail(localProblem);
  const domainProblem = checkDomain(domain);
  if (domainProblem) return fail(domainProblem);
  return { ok: true, address: `${local}@${domain.toLowerCase()}`, name: null };
}

/**
 * Checks a mailbox: a bare address, or the `Name <user@example.com>` / `"Name" <user@example.com>` /
 * `<user@example.com>` convention. The display name is unquoted, trimmed, null when empty, and refused
 * when it holds a line break, NUL or an angle bracket.
 */
export function checkMailbox(input: string): AddressCheck {
  const value = trimBlanks(input);
  if (!value.endsWith('>')) return checkAddress(value);
  const open = value.lastIndexOf('<');
  if (open === -1) return fail('Has a closing > without an opening <');
  const address = checkAddress(value.slice(open + 1, -1));
  if (!address.ok) return address;
  // Checked on the raw part before unquoting, so an oversized one costs no copy.
  if (open > MAX_DISPLAY_NAME_LENGTH + 2)
    return fail(`Display name must be at most ${MAX_DISPLAY_NAME_LENGTH} characters`);
  const display = unquote(trimBlanks(value.slice(0, open)));
  if (display.length > MAX_DISPLAY_NAME_LENGTH)
    return fail(`Display name must be at most ${MAX_DISPLAY_NAME_LENGTH} characters`);
  if (hasLineBreak(display)) return fail('Display name must not contain line breaks or NUL');
  if (display.includes('<') || display.includes('>')) return fail('Display name must not contain < or >');
  return { ok: true, address: address.address, name: display.length > 0 ? display : null };
}

/**
 * Validates and normalizes a bare address: the local part as given, the domain lower-cased.
 *
 * @throws MailroomError `VALIDATION_FAILED` with one issue naming the broken rule.
 * @example normalizeAddress(' Ann@Example.COM ') // 'Ann@example.com'
 */
export function normalizeAddress(input: string): string {
  return unwrap(typeof input === 'string' ? checkAddress(input) : fail('Must be a string')).address;
}

/**
 * Parses a bare address or a `Name <address>` mailbox (the form of `sender` given as a string).
 *
 * @throws MailroomError `VALIDATION_FAILED` with one issue naming the broken rule.
 * @example parseAddress('"Ann Lee" <ann@Example.com>') // { address: 'ann@example.com', name: 'Ann Lee' }
 */
export function parseAddress(input: string): { address: string; name: string | null } {
  const result = unwrap(typeof input === 'string' ? checkMailbox(input) : fail('Must be a string'));
  return { address: result.address, name: result.name };
}

function unwrap(result: AddressCheck): { address: string; name: string | null } {
  if (result.ok) return result;
  throw new MailroomError('VALIDATION_FAILED', `Invalid address: ${result.reason}`, {
    issues: [{ code: 'custom', path: [], message: result.reason }],
  });
}

function fail(reason: string): AddressCheck {
  return { ok: false, reason };
}

// RFC 5322 specials and whitespace are refused anywhere; '.' and '@' are placed by the part checks.
function charProblem(code: number): string | null {
  if (code === 0x0d || code === 0x0a || code === 0x00) return 'Must not contain CR, LF or NUL';
  if (code < 0x20 || code === 0x7f || (code >= 0x80 && code <= 0x9f) || code === 0x2028 || code === 0x2029) {
    return 'Must not contain control characters';
  }
  if (code === 0x3c || code === 0x3e) return 'Must be a bare address without < or >';
  if (code === 0x20) return 'Must not contain spaces';
  if (SPECIALS.has(code)) return `Must not contain "${String.fromCharCode(code)}"`;
  return null;
}

const SPECIALS = new Set(['"', '(', ')', ',', ':', ';', '[', ']', '\\'].map((c) => c.charCodeAt(0)));

function checkLocalPart(local: string): string | null {
  if (local.length === 0) return 'Must have a local part before the @';
  if (local.length > MAX_LOCAL_PART_LENGTH) {
    return `Local part must be at most ${MAX_LOCAL_PART_LENGTH} characters`;
  }
  if (local.startsWith('.') || local.endsWith('.') || local.includes('..')) {
    return 'Local part must not start or end with a dot or contain two dots in a row';
  }
  return null;
}

function checkDomain(domain: string): string | null {
  if (domain.length === 0) return 'Must have a domain after the @';
  const labels = domain.split('.');
  if (labels.length < 2) return 'Domain must contain a dot (for example example.com)';
  for (const label of labels) {
    if (label.length === 0) return 'Domain must not start or end with a dot or contain two dots in a row';
    if (label.length > MAX_LABEL_LENGTH)
      return `Domain labels must be at most ${MAX_LABEL_LENGTH} characters`;
    if (label.startsWith('-') || label.endsWith('-'))
      return 'Domain labels must not start or end with a hyphen';
    for (let i = 0; i < label.length; i++) {
      if (!isDomainChar(label.charCodeAt(i))) {
        return 'Domain may only contain letters, digits, hyphens and dots';
      }
    }
  }
  const top = labels[labels.length - 1] ?? '';
  if (/^[0-9]+$/.test(top)) return 'Domain must end in a name, not a number';
  return null;
}

/** Character classes of the fast scan: 1 `atext` of a local part, 2 also a domain character. */
const PLAIN = (() => {
  const table = new Uint8Array(128);
  for (const ch of "!#$%&'*+/=?^_`{|}~") table[ch.charCodeAt(0)] = 1;
  for (let c = 0x30; c <= 0x39; c++) table[c] = 2;
  for (let c = 0x41; c <= 0x5a; c++) table[c] = 2;
  for (let c = 0x61; c <= 0x7a; c++) table[c] = 2;
  table[0x2d] = 2;
  return table;
})();

/**
 * One pass over an address made of ASCII letters, digits and `atext` only, the common case: its
 * normalized form when it passes every rule of {@link checkAddressFully}, otherwise undefined (the full
 * check then finds the rule it breaks, with its message). Never accepts what the full check refuses.
 */
function plainAddress(value: string): string | undefined {
  const length = value.length;
  if (length === 0 || length > MAX_ADDRESS_LENGTH) return undefined;
  // Local part: atext runs separated by single dots.
  let i = 0;
  let previous = 0x2e; // as if after a dot: a leading dot is refused
  for (; i < length; i++) {
    const code = value.charCodeAt(i);
    if (code === 0x40) break;
    if (code === 0x2e) {
      if (previous === 0x2e) return undefined;
    } else if (code >= 128 || PLAIN[code] === 0) {
      return undefined;
    }
    previous = code;
  }
  if (i === 0 || i === length || i > MAX_LOCAL_PART_LENGTH || previous === 0x2e) return undefined;
  // Domain: at least two labels of letters, digits and inner hyphens; the last not all digits.
  let labels = 0;
  let labelStart = i + 1;
  let allDigits = true;
  let upper = false;
  for (let j = i + 1; j <= length; j++) {
    const code = j === length ? 0x2e : value.charCodeAt(j);
    if (code === 0x2e) {
      const size = j - labelStart;
      if (size === 0 || size > MAX_LABEL_LENGTH) return undefined;
      if (value.charCodeAt(labelStart) === 0x2d || value.charCodeAt(j - 1) === 0x2d) return undefined;
      labels++;
      labelStart = j + 1;
      if (j < length) allDigits = true;
      continue;
    }
    if (code >= 128 || PLAIN[code] !== 2) return undefined;
    if (code < 0x30 || code > 0x39) allDigits = false;
    if (code >= 0x41 && code <= 0x5a) upper = true;
  }
  if (labels < 2 || allDigits) return undefined;
  return upper ? `${value.slice(0, i)}@${value.slice(i + 1).toLowerCase()}` : value;
}

function isDomainChar(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x2d ||
    code >= 0x80
  );
}

// `"Ann \"A\" Lee"` -> `Ann "A" Lee`: one pass, a backslash escapes the next character.
function unquote(display: string): string {
  if (display.length < 2 || !display.startsWith('"') || !display.endsWith('"')) return display;
  let out = '';
  for (let i = 1; i < display.length - 1; i++) {
    const ch = display[i];
    if (ch === '\\' && i + 1 < display.length - 1) {
      i++;
      out += display[i];
    } else {
      out += ch;
    }
  }
  return trimBlanks(out);
}
