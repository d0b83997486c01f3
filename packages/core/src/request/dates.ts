/**
 * ISO-8601 timestamps as the clients send them (`2025-12-25T10:00:00.000Z`,
 * `2025-12-25T11:00:00+01:00`). Parsed by one anchored regex without nested quantifiers, then every
 * field is range-checked: `Date.parse` alone would accept local times and roll `02-30` into March.
 */

/** The outcome of parsing a timestamp, without throwing. */
export type DateCheck = { ok: true; date: Date } | { ok: false; reason: string };

/** Rule text for a date-time with a zone, shared by issues and the JSON Schema description. */
export const DATE_TIME_RULE =
  'Must be an ISO-8601 date-time with Z or an offset, for example 2025-12-25T10:00:00.000Z or 2025-12-25T11:00:00+01:00';

/** Rule text for a calendar date or date-time, shared by issues and the JSON Schema description. */
export const DATE_OR_DATE_TIME_RULE =
  'Must be an ISO-8601 date (2025-12-25) or a date-time with Z or an offset (2025-12-25T10:00:00Z)';

/** Parses an ISO-8601 date-time that carries `Z` or a `±hh:mm` / `±hhmm` offset. */
export function parseDateTime(input: string): DateCheck {
  const m = DATE_TIME.exec(input);
  if (!m) return { ok: false, reason: DATE_TIME_RULE };
  const [, y, mo, d, h, mi, s = '0', frac = '', zone = 'Z'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (!validDay(year, month, day) || hour > 23 || minute > 59 || second > 59) {
    return { ok: false, reason: `${DATE_TIME_RULE} (a field is out of range)` };
  }
  let offsetMinutes = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2));
    if (oh > 23 || om > 59) return { ok: false, reason: `${DATE_TIME_RULE} (the offset is out of range)` };
    offsetMinutes = sign * (oh * 60 + om);
  }
  const millis = Number(frac.padEnd(3, '0').slice(0, 3));
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * 60_000;
  // Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear puts them back.
  const date = new Date(utc);
  if (year < 100) date.setUTCFullYear(date.getUTCFullYear() - 1900);
  return { ok: true, date };
}

/** Parses an ISO-8601 calendar date (`2025-12-25`) or a date-time accepted by {@link parseDateTime}. */
export function parseDateOrDateTime(input: string): DateCheck {
  const m = DATE_ONLY.exec(input);
  if (!m) {
    const dateTime = parseDateTime(input);
    return dateTime.ok ? dateTime : { ok: false, reason: DATE_OR_DATE_TIME_RULE };
  }
  const [, y, mo, d] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (!validDay(year, month, day)) return { ok: false, reason: `${DATE_OR_DATE_TIME_RULE} (out of range)` };
  const date = new Date(Date.UTC(year, month - 1, day));
  if (year < 100) date.setUTCFullYear(year);
  return { ok: true, date };
}

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})$/;

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

function validDay(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day <= days;
}
