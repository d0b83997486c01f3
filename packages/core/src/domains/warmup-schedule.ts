import { MailroomError } from '../base/errors.js';

const DAY = 86_400_000;

/**
 * A sender domain's warm-up: on its first day it may send `initial` messages, on each later day
 * `factor` times the day before, until the day's allowance reaches `cap`, when the warm-up is over and
 * the domain sends without this limit. Days are UTC calendar days.
 *
 * @example { start: '2026-11-20', initial: 50, factor: 2, cap: 100_000 }
 */
export interface WarmupSchedule {
  /** The warm-up's first day, `YYYY-MM-DD` (UTC). Before it, the first day's allowance holds. */
  start: string;
  /** Messages on the first day. @default 50 */
  initial?: number;
  /** Growth from one day to the next. @default 2 */
  factor?: number;
  /** The allowance at which the warm-up ends (the domain is then unlimited). @default 100_000 */
  cap?: number;
}

/**
 * Warm-up (engine option `warmup`): a daily allowance per sender domain, and per transport route, kept by
 * every worker on the store together (the store's shared token counts, one key per domain or route and
 * day). Deliveries over the day's allowance are put back, unattempted, until the next UTC day, in the
 * order they came. A message under both a domain's and a route's schedule takes from both.
 *
 * @example warmup: { domains: { 'news.acme.com': { start: '2026-11-20' } } }
 * @example warmup: { routes: { 'new-ip': { start: '2026-11-20', initial: 200 } } }
 */
export interface WarmupOptions {
  /** Schedules by sender domain (the domain of the sender's address, lower-case). */
  domains?: Record<string, WarmupSchedule>;
  /**
   * Schedules by transport route: the `name` of a `routeTransport` route (a new IP's relay, a new
   * provider account). They count the messages the route takes (`Transport.routeOf`), the ones its
   * fallback sends for it while it fails over included. A name no route has is refused at start.
   */
  routes?: Record<string, WarmupSchedule>;
}

/** Where a domain's warm-up stands on a day. */
export interface WarmupDay {
  /** 1 on the start day (and before it), 2 the day after, ... */
  day: number;
  /** Messages allowed this UTC day; null once the warm-up is over. */
  allowance: number | null;
  /** The start of the next UTC day, when the next allowance begins. */
  nextDayAt: Date;
}

/**
 * A schedule's defaults filled in, checked: `VALIDATION_FAILED` naming the field otherwise. `name`: the
 * domain, or `route NAME` for a route's schedule.
 */
function resolved(name: string, s: WarmupSchedule): Required<WarmupSchedule> & { startMs: number } {
  const route = name.startsWith('route ') ? name.slice(6) : undefined;
  const path = route === undefined ? ['warmup', 'domains', name] : ['warmup', 'routes', route];
  const bad = (field: string, message: string) =>
    new MailroomError('VALIDATION_FAILED', `warmup ${name}: ${field} ${message}`, {
      issues: [{ code: 'custom', path: [...path, field], message }],
    });
  const startMs = /^\d{4}-\d{2}-\d{2}$/.test(s.start) ? Date.parse(`${s.start}T00:00:00Z`) : Number.NaN;
  if (Number.isNaN(startMs)) throw bad('start', 'must be a date, YYYY-MM-DD');
  const initial = s.initial ?? 50;
  const factor = s.factor ?? 2;
  const cap = s.cap ?? 100_000;
  if (!(Number.isSafeInteger(initial) && initial >= 1)) throw bad('initial', 'must be a positive integer');
  if (!(Number.isFinite(factor) && factor >= 1)) throw bad('factor', 'must be a number of at least 1');
  if (!(Number.isSafeInteger(cap) && cap >= initial))
    throw bad('cap', 'must be an integer of at least initial');
  return { start: s.start, initial, factor, cap, startMs };
}

/** Refuses a bad schedule now (`VALIDATION_FAILED` naming the field), not at its first use. */
export function checkWarmupSchedule(name: string, schedule: WarmupSchedule): void {
  resolved(name, schedule);
}

/** Where `schedule` stands at `now`. `name`: the domain, or `route NAME`, for the error of a bad schedule. */
export function warmupDay(schedule: WarmupSchedule, now: Date, name = 'domain'): WarmupDay {
  const s = resolved(name, schedule);
  const today = now.getTime() - (now.getTime() % DAY);
  const day = Math.max(1, Math.floor((today - s.startMs) / DAY) + 1);
  const allowance = Math.floor(s.initial * s.factor ** (day - 1));
  return { day, allowance: allowance >= s.cap ? null : allowance, nextDayAt: new Date(today + DAY) };
}
