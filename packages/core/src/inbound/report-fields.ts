/**
 * Reading the RFC 822-style field blocks that reports are made of: the groups of a
 * `message/delivery-status` part (RFC 3464), a `message/feedback-report` part (RFC 5965), and the
 * headers of a returned message.
 */

/** One block of fields: names lower-cased, continuation lines unfolded; a repeated field keeps its first value. */
export type FieldGroup = Map<string, string>;

/** The blank-line-separated groups of fields of `text` (the per-message group first in a DSN). */
export function fieldGroups(text: string): FieldGroup[] {
  const groups: FieldGroup[] = [];
  let current: FieldGroup | undefined;
  let last: string | undefined;
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') {
      current = undefined;
      last = undefined;
      continue;
    }
    if (/^[ \t]/.test(line) && current && last !== undefined) {
      current.set(last, `${current.get(last) ?? ''} ${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    if (!current) {
      current = new Map();
      groups.push(current);
    }
    const name = line.slice(0, colon).trim().toLowerCase();
    last = name;
    if (!current.has(name)) current.set(name, line.slice(colon + 1).trim());
    else last = undefined;
  }
  return groups;
}

/** The header block at the start of `text` (up to the first blank line). */
export function headerBlock(text: string): FieldGroup {
  const end = text.search(/\r?\n\r?\n/);
  return fieldGroups(end < 0 ? text : text.slice(0, end))[0] ?? new Map();
}

/** The address of an RFC 3464 address field (`rfc822; ann@example.com`), domain lower-cased. */
export function addressField(value: string | undefined): string | null {
  if (!value) return null;
  const typed = /^\s*([A-Za-z0-9-]+)\s*;\s*(.*)$/.exec(value);
  if (typed && (typed[1] as string).toLowerCase() !== 'rfc822') return null;
  return cleanAddress(typed ? (typed[2] as string) : value);
}

/** `<ann@Example.COM>` or `ann@Example.COM` as `ann@example.com`; null when it is not an address. */
export function cleanAddress(value: string): string | null {
  const m = /<?\s*([^\s<>"@]+@[A-Za-z0-9.-]+)\s*>?/.exec(value);
  if (!m) return null;
  const address = m[1] as string;
  const at = address.lastIndexOf('@');
  return address.slice(0, at) + address.slice(at).toLowerCase();
}

/** A Message-ID field's value, with angle brackets, or null. */
export function messageIdField(value: string | undefined): string | null {
  const m = value ? /<[^<>\s]+>/.exec(value) : null;
  return m ? m[0] : null;
}

/** The first RFC 3463 status code in `text` (`5.1.1`), or null. */
export function statusCodeIn(text: string): string | null {
  const m = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/.exec(text);
  return m ? `${m[1]}.${m[2]}.${m[3]}` : null;
}

/** One line of at most 500 characters: diagnostics are stored and shown, never trusted. */
export function oneLine(text: string | undefined | null): string | null {
  if (!text) return null;
  const line = text
    .replace(/[\r\n\t]+/g, ' ')
    .replace(/\s{2,}/g, ' ')
    .trim();
  return line === '' ? null : line.slice(0, 500);
}
