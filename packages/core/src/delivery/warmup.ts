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

/** Where `schedule` stands at `now`. `name`: the domain, or `route NAME`, for the error of a bad schedule. */
export function warmupDay(schedule: WarmupSchedule, now: Date, name = 'domain'): WarmupDay {
  const s = resolved(name, schedule);
  const today = now.getTime() - (now.getTime() % DAY);
  const day = Math.max(1, Math.floor((today - s.startMs) / DAY) + 1);
  const allowance = Math.floor(s.initial * s.factor ** (day - 1));
  return { day, allowance: allowance >= s.cap ? null : allowance, nextDayAt: new Date(today + DAY) };
}

/** The answer of {@link WarmupGate.admit}. */
export type WarmupAdmission =
  | { readonly go: true }
  | { readonly go: false; readonly until: Date; readonly reason: string };

/** The worker's warm-up gate. `route`: the transport route that takes the message, if it has a name. */
export interface WarmupGate {
  /**
   * Before any work on a delivery: when its sender domain or its route has used up today's allowance (as
   * this worker has seen), the time to come back; otherwise undefined.
   */
  closedUntil(senderDomain: string, route?: string): { until: Date; reason: string } | undefined;
  /** Right before the send: one message of today's allowance of each, or the time to come back. */
  admit(senderDomain: string, route?: string): Promise<WarmupAdmission>;
}

/** What a schedule holds back: a sender domain, or a route. */
interface Subject {
  /** `news.acme.com`, or `route new-ip`: the logs' and the reasons' name. */
  name: string;
  /** The store's token key, before the day's number. */
  key: string;
  schedule: WarmupSchedule;
}

/** The gate of one worker: checks every schedule once, at start. */
export function createWarmupGate(
  options: WarmupOptions,
  parts: { store: DestinationLimitStore; clock: Clock; logger: Logger },
): WarmupGate {
  const { store, clock, logger } = parts;
  const subjects = (entries: Record<string, WarmupSchedule> | undefined, route: boolean) =>
    new Map(
      Object.entries(entries ?? {}).map(([given, schedule]) => {
        const id = route ? given : given.toLowerCase();
        const subject: Subject = route
          ? { name: `route ${id}`, key: `warmup-route:${id}`, schedule }
          : { name: id, key: `warmup:${id}`, schedule };
        resolved(subject.name, schedule);
        return [id, subject] as const;
      }),
    );
  const domains = subjects(options.domains, false);
  const routes = subjects(options.routes, true);
  /** Per subject (its key): the day whose allowance this worker saw used up. */
  const closed = new Map<string, { day: number }>();
  const of = (senderDomain: string, route: string | undefined): Subject[] => {
    const out: Subject[] = [];
    const domain = domains.get(senderDomain.toLowerCase());
    if (domain) out.push(domain);
    const routed = route === undefined ? undefined : routes.get(route);
    if (routed) out.push(routed);
    return out;
  };

  /**
   * The next day's start, the same for every delivery put back: claims take due deliveries by (due time,
   * id), and ids grow with creation, so tomorrow they go in the order they came, whichever order the
   * concurrent sends of today put them back in.
   */
  const deferral = (subject: Subject, day: WarmupDay): { until: Date; reason: string } => {
    const state = closed.get(subject.key);
    if (!state || state.day !== day.day) {
      closed.set(subject.key, { day: day.day });
      logger.info(
        { warmup: subject.name, day: day.day, allowance: day.allowance },
        "warm-up: today's allowance is used up; the rest waits for tomorrow",
      );
    }
    return {
      until: day.nextDayAt,
      reason: `warm-up of ${subject.name}: day ${day.day}'s allowance of ${day.allowance} is used up`,
    };
  };

  async function take(subject: Subject, now: Date): Promise<WarmupAdmission> {
    const day = warmupDay(subject.schedule, now, subject.name);
    if (day.allowance === null) return { go: true };
    if (closed.get(subject.key)?.day === day.day) return { go: false, ...deferral(subject, day) };
    // One key per subject and day; the window outlasts the day, so only that day's takes count.
    let granted: number;
    try {
      ({ granted } = await store.takeTokens({
        key: `${subject.key}:${day.day}`,
        count: 1,
        windows: [{ windowMs: 2 * DAY, limit: day.allowance }],
        now,
      }));
    } catch (error) {
      // A store outage is logged once, by the engine's watch of the store.
      if (!isStoreOutage(error)) {
        logger.warn(
          { err: error, warmup: subject.name },
          'warm-up: taking the allowance failed; the send waits',
        );
      }
      return {
        go: false,
        until: new Date(now.getTime() + STORE_FAILED_DEFER_MS),
        reason: `warm-up of ${subject.name}: allowance unavailable`,
      };
    }
    return granted === 1 ? { go: true } : { go: false, ...deferral(subject, day) };
  }

  return {
    closedUntil(senderDomain, route) {
      for (const subject of of(senderDomain, route)) {
        const state = closed.get(subject.key);
        if (!state) continue;
        const day = warmupDay(subject.schedule, clock.now(), subject.name);
        if (state.day === day.day) return deferral(subject, day);
      }
      return undefined;
    },

    async admit(senderDomain, route) {
      const now = clock.now();
      // In turn: a refusal by the second leaves the first's message taken, unsent (at most one per
      // concurrent send, once a day, before this worker sees that subject closed).
      for (const subject of of(senderDomain, route)) {
        const answer = await take(subject, now);
        if (!answer.go) return answer;
      }
      return { go: true };
    },
  };
}
