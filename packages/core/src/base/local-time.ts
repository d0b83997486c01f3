/**
 * Wall-clock times in IANA time zones (through `Intl`, so daylight saving is the platform's tz data):
 * the next "09:00" of a recipient, and sending windows such as weekdays 08:00-20:00 local. Pure
 * functions on epoch milliseconds; one `Intl.DateTimeFormat` per zone, kept.
 */

/** A time of day, `HH:MM` (24 hours), as minutes after midnight. */
export type MinuteOfDay = number;

/** Days of the week as `Date.getUTCDay()` numbers them: 0 Sunday ... 6 Saturday. */
export const WEEKDAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

/** A day's name, as a sending window lists it. */
export type WeekdayName = (typeof WEEKDAY_NAMES)[number];

/** A sending window, in the recipient's own zone: on `days`, from `from` (inclusive) to `to` (exclusive). */
export interface SendingWindow {
  /** Days it is open; all seven when absent. */
  days?: WeekdayName[];
  /** Opens, `HH:MM`. */
  from: string;
  /** Closes, `HH:MM` (after `from`). */
  to: string;
}

const CLOCK_TIME = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** `HH:MM` (00:00 to 23:59) as minutes after midnight, or undefined. */
export function parseClockTime(value: string): MinuteOfDay | undefined {
  const match = CLOCK_TIME.exec(value);
  if (!match) return undefined;
  return Number(match[1]) * 60 + Number(match[2]);
}

const formats = new Map<string, Intl.DateTimeFormat | null>();

/** The zone's formatter, or null for a name `Intl` does not know. */
function formatOf(zone: string): Intl.DateTimeFormat | null {
  let format = formats.get(zone);
  if (format === undefined) {
    try {
      format = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      format = null;
    }
    // Bounded: names come from requests and traits; past a few thousand, stop remembering new ones.
    if (formats.size < 5_000) formats.set(zone, format);
  }
  return format;
}

/** Whether `zone` is an IANA time zone name (or `UTC`) that this platform knows. */
export function isTimeZone(zone: unknown): zone is string {
  return typeof zone === 'string' && zone.length > 0 && zone.length <= 64 && formatOf(zone) !== null;
}

/** The wall clock in `format`'s zone at `ms`: year, month (1-12), day, minutes of the day. */
function wallClock(format: Intl.DateTimeFormat, ms: number) {
  const parts: Record<string, number> = {};
  for (const part of format.formatToParts(ms)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = parts;
  return { year, month, day, minutes: hour * 60 + minute, second };
}

/** Milliseconds the zone is ahead of UTC at `ms`. */
function offsetAt(format: Intl.DateTimeFormat, ms: number): number {
  const w = wallClock(format, ms);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, 0, w.minutes, w.second);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/**
 * The instant the zone's clock shows `minutes` on the local date (year, month, day; day may overflow).
 * A time skipped by a spring-forward change is taken as the same distance after the gap.
 */
function instantOf(
  format: Intl.DateTimeFormat,
  year: number,
  month: number,
  day: number,
  minutes: number,
): number {
  const guess = Date.UTC(year, month - 1, day, 0, minutes);
  const first = guess - offsetAt(format, guess);
  const second = guess - offsetAt(format, first);
  if (first === second) return first;
  // Near a change the two guesses differ: take the one whose clock shows the time asked (the earlier
  // of two in a repeated hour); in a skipped hour neither does, and the later one is after the gap.
  const shows = (t: number) => wallClock(format, t).minutes === minutes % (24 * 60);
  const [early, late] = first < second ? [first, second] : [second, first];
  if (shows(early)) return early;
  return late;
}

/** Local weekday (0 Sunday) of a local date. */
function weekdayOf(year: number, month: number, day: number): number {
  return new Date(Date.UTC(year, month - 1, day)).getUTCDay();
}

/**
 * The first instant at or after `after` when the clock in `zone` shows `at` (minutes after midnight):
 * today's if it has not passed, else tomorrow's. `zone` must be known (see {@link isTimeZone}).
 */
export function nextLocalTime(after: number, at: MinuteOfDay, zone: string): number {
  const format = formatOf(zone);
  if (!format) throw new RangeError(`Unknown time zone: ${zone}`);
  const today = wallClock(format, after);
  const candidate = instantOf(format, today.year, today.month, today.day, at);
  if (candidate >= after) return candidate;
  return instantOf(format, today.year, today.month, today.day + 1, at);
}

/**
 * `when` if it falls inside `window` in `zone`, else the window's next opening after it (looking up to
 * eight days ahead: a window with no day open never opens, and `when` is answered).
 */
export function nextInWindow(when: number, window: SendingWindow, zone: string): number {
  const format = formatOf(zone);
  if (!format) throw new RangeError(`Unknown time zone: ${zone}`);
  const from = parseClockTime(window.from) ?? 0;
  const to = parseClockTime(window.to) ?? 24 * 60;
  const open = new Set((window.days ?? WEEKDAY_NAMES).map((d) => WEEKDAY_NAMES.indexOf(d)));
  const local = wallClock(format, when);
  for (let k = 0; k <= 8; k++) {
    const day = local.day + k;
    if (!open.has(weekdayOf(local.year, local.month, day))) continue;
    if (k === 0) {
      if (local.minutes >= from && local.minutes < to) return when;
      if (local.minutes < from) return instantOf(format, local.year, local.month, day, from);
      continue;
    }
    return instantOf(format, local.year, local.month, day, from);
  }
  return when;
}
