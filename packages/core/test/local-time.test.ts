import { describe, expect, it } from 'vitest';
import { isTimeZone, nextInWindow, nextLocalTime, parseClockTime } from '../src/base/local-time.js';
import { plannedDue, windowOpensAt, zoneOf } from '../src/store/delivery-plan.js';
import type { DeliveryPlan } from '../src/store/records.js';

/** Local times and sending windows (issue 41): the time-zone arithmetic, daylight saving included. */

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const NINE = 9 * 60;

describe('parseClockTime and isTimeZone', () => {
  it('takes HH:MM from 00:00 to 23:59 only', () => {
    expect(parseClockTime('00:00')).toBe(0);
    expect(parseClockTime('09:30')).toBe(570);
    expect(parseClockTime('23:59')).toBe(1439);
    for (const bad of ['24:00', '25:00', '9:00', '09:60', '0900', ' 09:00', '09:00:00']) {
      expect(parseClockTime(bad), bad).toBeUndefined();
    }
  });

  it('knows IANA names and UTC, and nothing else', () => {
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    for (const bad of ['Mars/Base', '', 'Europe/Berlin; DROP', 42, null, 'x'.repeat(100)]) {
      expect(isTimeZone(bad)).toBe(false);
    }
  });
});

describe('nextLocalTime', () => {
  it('is the next 09:00 in the zone, across the spring change of that day', () => {
    // 2031-03-30: Europe moves to summer time at 01:00 UTC.
    const start = at('2031-03-30T00:00:00Z');
    expect(iso(nextLocalTime(start, NINE, 'Europe/Berlin'))).toBe('2031-03-30T07:00:00.000Z');
    expect(iso(nextLocalTime(start, NINE, 'Europe/London'))).toBe('2031-03-30T08:00:00.000Z');
    // The day before, still winter time.
    expect(iso(nextLocalTime(at('2031-03-29T00:00:00Z'), NINE, 'Europe/Berlin'))).toBe(
      '2031-03-29T08:00:00.000Z',
    );
  });

  it('is today when not passed (equal counts), else tomorrow', () => {
    const tokyoNine = at('2031-03-30T00:00:00Z');
    expect(nextLocalTime(tokyoNine, NINE, 'Asia/Tokyo')).toBe(tokyoNine);
    expect(iso(nextLocalTime(tokyoNine + 1, NINE, 'Asia/Tokyo'))).toBe('2031-03-31T00:00:00.000Z');
    expect(iso(nextLocalTime(at('2031-03-30T00:00:00Z'), NINE, 'Australia/Sydney'))).toBe(
      '2031-03-30T22:00:00.000Z',
    );
    expect(iso(nextLocalTime(at('2031-03-30T00:00:00Z'), NINE, 'Asia/Kolkata'))).toBe(
      '2031-03-30T03:30:00.000Z',
    );
  });

  it('takes a time skipped by the change as after the gap, and a repeated one as its first', () => {
    // New York, 2031-03-09: 02:00 EST jumps to 03:00 EDT; 02:30 does not exist.
    expect(iso(nextLocalTime(at('2031-03-09T00:00:00Z'), 150, 'America/New_York'))).toBe(
      '2031-03-09T07:30:00.000Z',
    );
    // 2031-11-02: 01:30 happens twice (EDT, then EST); the first is 05:30 UTC.
    expect(iso(nextLocalTime(at('2031-11-02T00:00:00Z'), 90, 'America/New_York'))).toBe(
      '2031-11-02T05:30:00.000Z',
    );
  });

  it('refuses an unknown zone', () => {
    expect(() => nextLocalTime(0, NINE, 'Mars/Base')).toThrow(RangeError);
  });
});

describe('nextInWindow', () => {
  const weekdays = { days: ['mon', 'tue', 'wed', 'thu', 'fri'] as const, from: '08:00', to: '20:00' };
  const window = { ...weekdays, days: [...weekdays.days] };

  it('keeps a time inside, moves one before the opening to it, one after the close to the next day', () => {
    expect(iso(nextInWindow(at('2031-04-07T10:00:00Z'), window, 'UTC'))).toBe('2031-04-07T10:00:00.000Z');
    expect(iso(nextInWindow(at('2031-04-07T06:00:00Z'), window, 'UTC'))).toBe('2031-04-07T08:00:00.000Z');
    expect(iso(nextInWindow(at('2031-04-07T20:00:00Z'), window, 'UTC'))).toBe('2031-04-08T08:00:00.000Z');
  });

  it('skips closed days (Friday evening to Monday) and reads the window in the zone', () => {
    expect(iso(nextInWindow(at('2031-04-11T21:00:00Z'), window, 'UTC'))).toBe('2031-04-14T08:00:00.000Z');
    // 19:30 UTC is 21:30 in Berlin (CEST): closed there, open at 08:00 CEST = 06:00 UTC next day.
    expect(iso(nextInWindow(at('2031-04-07T19:30:00Z'), window, 'Europe/Berlin'))).toBe(
      '2031-04-08T06:00:00.000Z',
    );
  });
});

describe('plannedDue and the delivery plan', () => {
  const plan: DeliveryPlan = { timezone: 'tz', fallback: 'UTC', at: '09:00' };
  const start = new Date('2031-03-30T00:00:00Z');

  it("reads the recipient's zone from traits, then variables; a bad or missing one is the fallback", () => {
    expect(zoneOf(plan, { traits: { tz: 'Asia/Tokyo' }, variables: { tz: 'Europe/Berlin' } })).toBe(
      'Asia/Tokyo',
    );
    expect(zoneOf(plan, { variables: { tz: 'Europe/Berlin' } })).toBe('Europe/Berlin');
    expect(zoneOf(plan, { variables: { tz: 'Mars/Base' } })).toBe('UTC');
    expect(zoneOf(plan, { variables: { tz: 7 } })).toBe('UTC');
    expect(zoneOf(plan, {})).toBe('UTC');
    expect(zoneOf({ ...plan, timezone: null, fallback: 'Asia/Tokyo' }, { variables: { tz: 'UTC' } })).toBe(
      'Asia/Tokyo',
    );
  });

  it('is the local time, then moved into the window', () => {
    expect(plannedDue(plan, start, { variables: { tz: 'Europe/Berlin' } }).toISOString()).toBe(
      '2031-03-30T07:00:00.000Z',
    );
    // 2031-03-30 is a Sunday: a weekday window moves it to Monday's opening.
    const windowed: DeliveryPlan = { ...plan, window: { days: ['mon'], from: '10:00', to: '12:00' } };
    expect(plannedDue(windowed, start, { variables: { tz: 'Europe/Berlin' } }).toISOString()).toBe(
      '2031-03-31T08:00:00.000Z',
    );
    expect(
      windowOpensAt(windowed, new Date('2031-03-31T09:00:00Z'), { variables: { tz: 'Europe/Berlin' } }),
    ).toBe(undefined);
    expect(
      windowOpensAt(windowed, new Date('2031-03-31T10:00:00Z'), {
        variables: { tz: 'Europe/Berlin' },
      })?.toISOString(),
    ).toBe('2031-04-07T08:00:00.000Z');
  });
});
