import type { Clock, Logger } from '../base/base-types.js';
import { isStoreOutage, MailroomError } from '../base/errors.js';
import type { DestinationLimitStore } from '../store/destination-limit-store.js';

const DAY = 86_400_000;
/** How long a delivery waits when the store could not be asked. */
const STORE_FAILED_DEFER_MS = 1_000;

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
 * Warm-up (engine option `warmup`): a daily allowance per sender domain, kept by every worker on the store
 * together (the store's shared token counts, one key per domain and day). Deliveries over the day's
 * allowance are put back, unattempted, until the next UTC day, in the order they came.
 *
 * @example warmup: { domains: { 'news.acme.com': { start: '2026-11-20' } } }
 */
export interface WarmupOptions {
  /** Schedules by sender domain (the domain of the sender's address, lower-case). */
  domains: Record<string, WarmupSchedule>;
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

/** A schedule's defaults filled in, checked: `VALIDATION_FAILED` naming the field otherwise. */
function resolved(domain: string, s: WarmupSchedule): Required<WarmupSchedule> & { startMs: number } {
  const bad = (field: string, message: string) =>
    new MailroomError('VALIDATION_FAILED', `warmup ${domain}: ${field} ${message}`, {
      issues: [{ code: 'custom', path: ['warmup', 'domains', domain, field], message }],
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

/** Where `schedule` stands at `now`. */
export function warmupDay(schedule: WarmupSchedule, now: Date, domain = 'domain'): WarmupDay {
  const s = resolved(domain, schedule);
  const today = now.getTime() - (now.getTime() % DAY);
  const day = Math.max(1, Math.floor((today - s.startMs) / DAY) + 1);
  const allowance = Math.floor(s.initial * s.factor ** (day - 1));
  return { day, allowance: allowance >= s.cap ? null : allowance, nextDayAt: new Date(today + DAY) };
}

/** The answer of {@link WarmupGate.admit}. */
export type WarmupAdmission =
  | { readonly go: true }
  | { readonly go: false; readonly until: Date; readonly reason: string };

/** The worker's warm-up gate. */
export interface WarmupGate {
  /**
   * Before any work on a delivery: when `senderDomain` has used up today's allowance (as this worker
   * has seen), the time to come back; otherwise undefined.
   */
  closedUntil(senderDomain: string): { until: Date; reason: string } | undefined;
  /** Right before the send: one message of today's allowance, or the time to come back. */
  admit(senderDomain: string): Promise<WarmupAdmission>;
}

/** The gate of one worker: checks every schedule once, at start. */
export function createWarmupGate(
  options: WarmupOptions,
  parts: { store: DestinationLimitStore; clock: Clock; logger: Logger },
): WarmupGate {
  const { store, clock, logger } = parts;
  const schedules = new Map(
    Object.entries(options.domains).map(([domain, s]) => {
      resolved(domain, s);
      return [domain.toLowerCase(), s] as const;
    }),
  );
  /** Per domain: the day whose allowance this worker saw used up. */
  const closed = new Map<string, { day: number }>();

  /**
   * The next day's start, the same for every delivery put back: claims take due deliveries by (due time,
   * id), and ids grow with creation, so tomorrow they go in the order they came, whichever order the
   * concurrent sends of today put them back in.
   */
  const deferral = (domain: string, day: WarmupDay): { until: Date; reason: string } => {
    const state = closed.get(domain);
    if (!state || state.day !== day.day) {
      closed.set(domain, { day: day.day });
      logger.info(
        { senderDomain: domain, day: day.day, allowance: day.allowance },
        "warm-up: today's allowance is used up; the rest waits for tomorrow",
      );
    }
    return {
      until: day.nextDayAt,
      reason: `warm-up of ${domain}: day ${day.day}'s allowance of ${day.allowance} is used up`,
    };
  };

  return {
    closedUntil(senderDomain) {
      const domain = senderDomain.toLowerCase();
      const schedule = schedules.get(domain);
      const state = closed.get(domain);
      if (!(schedule && state)) return undefined;
      const day = warmupDay(schedule, clock.now(), domain);
      return state.day === day.day ? deferral(domain, day) : undefined;
    },

    async admit(senderDomain) {
      const domain = senderDomain.toLowerCase();
      const schedule = schedules.get(domain);
      if (!schedule) return { go: true };
      const now = clock.now();
      const day = warmupDay(schedule, now, domain);
      if (day.allowance === null) return { go: true };
      if (closed.get(domain)?.day === day.day) return { go: false, ...deferral(domain, day) };
      // One key per domain and day; the window outlasts the day, so only that day's takes count.
      let granted: number;
      try {
        ({ granted } = await store.takeTokens({
          key: `warmup:${domain}:${day.day}`,
          count: 1,
          windows: [{ windowMs: 2 * DAY, limit: day.allowance }],
          now,
        }));
      } catch (error) {
        // A store outage is logged once, by the engine's watch of the store.
        if (!isStoreOutage(error)) {
          logger.warn(
            { err: error, senderDomain: domain },
            'warm-up: taking the allowance failed; the send waits',
          );
        }
        return {
          go: false,
          until: new Date(now.getTime() + STORE_FAILED_DEFER_MS),
          reason: `warm-up of ${domain}: allowance unavailable`,
        };
      }
      return granted === 1 ? { go: true } : { go: false, ...deferral(domain, day) };
    },
  };
}
