import type { Clock, Logger } from '../base/base-types.js';
import { isStoreOutage, MailroomError } from '../base/errors.js';
import type { WarmupOptions, WarmupSchedule } from '../domains/warmup-schedule.js';
import { checkWarmupSchedule, type WarmupDay, warmupDay } from '../domains/warmup-schedule.js';
import type { DestinationLimitStore } from '../store/destination-limit-store.js';
import type { Transport } from '../transport/transport.js';

const DAY = 86_400_000;
/** How long a delivery waits when the store could not be asked. */
const STORE_FAILED_DEFER_MS = 1_000;

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
        checkWarmupSchedule(subject.name, schedule);
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

/**
 * Refuses a bad `warmup` option when the engine is made, naming the field: a bad schedule, or a route
 * name that `transport` (a `routeTransport`) has no route of.
 */
export function checkWarmupOptions(warmup: WarmupOptions, transport: Pick<Transport, 'routeNames'>): void {
  for (const [domain, schedule] of Object.entries(warmup.domains ?? {}))
    checkWarmupSchedule(domain, schedule);
  for (const [route, schedule] of Object.entries(warmup.routes ?? {})) {
    if (!transport.routeNames?.includes(route)) {
      throw new MailroomError(
        'VALIDATION_FAILED',
        `warmup route ${route}: the transport has no route of that name (name a routeTransport route)`,
        { issues: [{ code: 'custom', path: ['warmup', 'routes', route], message: 'no route of that name' }] },
      );
    }
    checkWarmupSchedule(`route ${route}`, schedule);
  }
}
