/**
 * The activity charts' one query layer: the event outbox counted over time (`ActivityStore`) turned
 * into aligned series, per project, per mailing or per destination. The dashboard draws them; `GET`
 * views can serve them as they are.
 */
import { domainOf } from '../base/address-parts.js';
import { MailroomError } from '../base/errors.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import { DEFAULT_DESTINATION_GROUPS, type DestinationOptions } from '../delivery/destinations.js';
import { type WarmupDay, type WarmupOptions, warmupDay } from '../domains/warmup-schedule.js';
import type { ReputationGuardOptions } from '../pauses/guard-options.js';
import type { PauseView } from '../pauses/pause-control.js';
import type { ActivityStore, EventSeriesRow } from '../store/activity-store.js';
import type { EventType } from '../store/event-records.js';
import type { MailingRecord } from '../store/records.js';
import { type GuardLine, guardLines } from './activity-guard.js';
import { ACTIVITY_SERIES, type ActivitySeriesName } from './activity-names.js';
import { bandConcerns, type PauseBand, pauseBands } from './activity-pauses.js';

export type { GuardLine } from './activity-guard.js';
export { ACTIVITY_SERIES, type ActivitySeriesName } from './activity-names.js';
export type { PauseBand } from './activity-pauses.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Buckets of one chart at most: past this, the range is cut to its most recent part. */
export const MAX_ACTIVITY_BUCKETS = 400;
/** Buckets of one chart at least: a shorter range starts earlier, so that a line has a shape. */
export const MIN_ACTIVITY_BUCKETS = 10;

/** The event type (and variant) each series counts. */
const SERIES_OF: Readonly<Record<string, ActivitySeriesName>> = {
  'email.sent|': 'sent',
  'email.delivery_delayed|': 'deferred',
  'email.failed|': 'failed',
  'email.bounced|recipient-hard': 'bounced.recipient-hard',
  'email.bounced|soft': 'bounced.soft',
  'email.bounced|sender-side': 'bounced.sender-side',
  'email.complained|': 'complained',
  'email.suppressed|': 'suppressed',
  'email.opened|human': 'opened.human',
  'email.opened|machine': 'opened.machine',
  'email.clicked|human': 'clicked.human',
  'email.clicked|machine': 'clicked.machine',
};

/** Events drawn as marks on the time axis rather than counted: a broadcast's turns. */
const MARKER_TYPES = new Set<string>([
  'broadcast.paused',
  'broadcast.resumed',
  'broadcast.completed',
  'broadcast.cancelled',
]);

/**
 * What to chart. Without `mailingRef`, the whole project; `destination` or `domains` narrow to a
 * destination.
 */
export interface ActivityQuery {
  /** One mailing's events (its ref); `NOT_FOUND` for another project's. */
  mailingRef?: string;
  /**
   * A destination: a group's name (its domain patterns, from the engine's `destinations` option and the
   * default groups) or a domain. Domains a group takes in by MX lookup are not counted in it.
   */
  destination?: string;
  /** Only events to addresses at these domains (`name.*`: the name, a dot, anything); wins over `destination`. */
  domains?: readonly string[];
  /** The start (default: the mailing's creation, else 24 hours before `to`). */
  from?: Date;
  /** The end (default: now). */
  to?: Date;
}

/** A chart's data: every series has one count per bucket, zeros included. */
export interface ActivityChart {
  from: Date;
  to: Date;
  /** The width of a bucket: a minute for up to six hours, an hour for up to fourteen days, else a day. */
  bucketMs: number;
  /** The buckets' starts (epoch milliseconds), ascending, one per bucket of the range. */
  buckets: number[];
  /** Each series' counts, aligned with `buckets`. */
  series: Record<ActivitySeriesName, number[]>;
  /** A broadcast's pauses, resumes, completion or cancellation, at the start of their bucket. */
  markers: Array<{ at: number; type: EventType; count: number }>;
  /** The pauses over the period that concern the chart (see `bandConcerns`), by start. */
  pauses: PauseBand[];
  /** The reputation guard's rules over the buckets; empty when the guard is off. */
  guard: GuardLine[];
  /** Today's warm-up of the sender domains concerned (the mailing's, else the project's senders'). */
  warmup: Array<WarmupDay & { domain: string }>;
  /** The destination charted, with the domains (and patterns) counted; null for all of them. */
  destination: { name: string; domains: string[] } | null;
}

/** Pause events read for one chart at most: past this, the latest are left out. */
const MAX_PAUSE_EVENTS = 1_000;

/** The bucket width for a range: per minute while fresh, per hour, then per day. */
export function bucketFor(spanMs: number): number {
  if (spanMs <= 6 * HOUR) return MINUTE;
  if (spanMs <= 14 * DAY) return HOUR;
  return DAY;
}

/** Rows of the store laid out as a chart over `[from, to)` with buckets of `bucketMs`. */
export function chartOf(
  rows: readonly EventSeriesRow[],
  from: Date,
  to: Date,
  bucketMs: number,
): ActivityChart {
  const first = from.getTime() - (from.getTime() % bucketMs);
  const count = Math.max(1, Math.ceil((to.getTime() - first) / bucketMs));
  const buckets = Array.from({ length: count }, (_, i) => first + i * bucketMs);
  const series = Object.fromEntries(ACTIVITY_SERIES.map((name) => [name, buckets.map(() => 0)])) as Record<
    ActivitySeriesName,
    number[]
  >;
  const markers: ActivityChart['markers'] = [];
  for (const row of rows) {
    const index = Math.floor((row.bucket - first) / bucketMs);
    if (index < 0 || index >= count) continue;
    if (MARKER_TYPES.has(row.type)) {
      markers.push({ at: row.bucket, type: row.type, count: row.count });
      continue;
    }
    const name = SERIES_OF[`${row.type}|${row.variant ?? ''}`];
    if (name) series[name][index] = (series[name][index] ?? 0) + row.count;
  }
  markers.sort((a, b) => a.at - b.at || a.type.localeCompare(b.type));
  return {
    from: new Date(first),
    to,
    bucketMs,
    buckets,
    series,
    markers,
    pauses: [],
    guard: [],
    warmup: [],
    destination: null,
  };
}

/** The domains (and `name.*` patterns) of a destination: a group's patterns, else the name as a domain. */
export function destinationDomains(name: string, options: DestinationOptions | undefined): string[] {
  const groups = {
    ...(options?.defaultGroups === false ? {} : DEFAULT_DESTINATION_GROUPS),
    ...options?.groups,
  };
  const key = name.trim().toLowerCase();
  const patterns = Object.entries(groups).find(([group]) => group.toLowerCase() === key)?.[1];
  return patterns ? patterns.map((p) => p.toLowerCase()) : [key];
}

/** What the query borrows from the engine, so that scoping stays defined in one place. */
export interface ActivityQueryDeps {
  resolveAuth(auth: string | AuthContext): Promise<AuthContext>;
  /** The project's mailing by ref; `NOT_FOUND` otherwise. */
  findMailing(auth: string | AuthContext, ref: string): Promise<MailingRecord>;
  /** The project's pauses in force (broadcasts by ref). */
  listPauses(auth: string | AuthContext): Promise<PauseView[]>;
  /** The engine's `guard` option (its rules are drawn); `false`: off. */
  guard: ReputationGuardOptions | false | undefined;
  /** The engine's `destinations` option (its groups name destinations). */
  destinations: DestinationOptions | undefined;
  /** The engine's `warmup` option (today's allowance is drawn). */
  warmup: WarmupOptions | undefined;
}

/** The engine's `activity` read (see `Mailroom.activity`). */
export function createActivityQueries(
  ctx: BaseContext,
  deps: ActivityQueryDeps,
): { activity(auth: string | AuthContext, query?: ActivityQuery): Promise<ActivityChart> } {
  const store: ActivityStore = ctx.store;
  return {
    async activity(auth, query = {}) {
      const { project } = await deps.resolveAuth(auth);
      const mailing = query.mailingRef ? await deps.findMailing(auth, query.mailingRef) : undefined;
      const to = query.to ?? ctx.clock.now();
      let from = query.from ?? mailing?.createdAt ?? new Date(to.getTime() - DAY);
      // A mailing made this very millisecond, or by a host whose clock runs ahead: its chart starts now
      // (widened below), where only a `from` the caller gave is refused.
      if (query.from === undefined && from.getTime() >= to.getTime()) from = new Date(to.getTime() - 1);
      if (!(from.getTime() < to.getTime())) {
        throw new MailroomError('VALIDATION_FAILED', 'from must be before to', {
          issues: [{ code: 'custom', path: ['from'], message: 'must be before to' }],
        });
      }
      const bucketMs = bucketFor(to.getTime() - from.getTime());
      const earliest = to.getTime() - MAX_ACTIVITY_BUCKETS * bucketMs;
      const latest = to.getTime() - MIN_ACTIVITY_BUCKETS * bucketMs;
      if (from.getTime() < earliest) from = new Date(earliest);
      if (from.getTime() > latest) from = new Date(latest);
      const destination =
        query.domains !== undefined
          ? { name: query.domains.join(', '), domains: query.domains.map((d) => d.toLowerCase()) }
          : query.destination !== undefined
            ? {
                name: query.destination.trim().toLowerCase(),
                domains: destinationDomains(query.destination, deps.destinations),
              }
            : null;
      const scope = {
        ...(mailing ? { mailingRef: mailing.ref } : {}),
        ...(destination ? { domains: destination.domains } : {}),
      };
      const [rows, pauseEvents, active, warmup] = await Promise.all([
        store.countEventSeries(project.id, { from, to, bucketMs, ...scope }),
        // Every pause of the period: the project's and the destinations' have no mailing.
        store.listEventsBetween(project.id, {
          from,
          to,
          types: ['broadcast.paused', 'broadcast.resumed'],
          limit: MAX_PAUSE_EVENTS,
        }),
        deps.listPauses(auth),
        warmupToday(ctx, deps.warmup, project.id, mailing),
      ]);
      const chart = chartOf(rows, from, to, bucketMs);
      chart.pauses = pauseBands(pauseEvents, active, chart.from, to).filter((band) =>
        bandConcerns(band, scope),
      );
      const resumedAt = new Set(
        chart.pauses
          .filter((band) => band.scope === 'broadcast' && band.to !== null && band.ended !== 'timed')
          .map((band) => Math.floor(((band.to as Date).getTime() - chart.from.getTime()) / bucketMs)),
      );
      chart.guard = guardLines(chart.series, bucketMs, deps.guard, mailing ? { resumedAt } : undefined);
      chart.warmup = warmup;
      chart.destination = destination;
      return chart;
    },
  };
}

/** Today's warm-up of the mailing's sender domain, else of the project's senders' domains. */
async function warmupToday(
  ctx: BaseContext,
  warmup: WarmupOptions | undefined,
  projectId: string,
  mailing: MailingRecord | undefined,
): Promise<ActivityChart['warmup']> {
  const schedules = warmup?.domains;
  if (!schedules || Object.keys(schedules).length === 0) return [];
  const domains = mailing
    ? [domainOf(mailing.sender.address)]
    : (await ctx.store.listSenders(projectId, { limit: 100 })).map((s) => domainOf(s.address));
  const now = ctx.clock.now();
  const out: ActivityChart['warmup'] = [];
  for (const domain of [...new Set(domains)].sort()) {
    const schedule = Object.entries(schedules).find(([name]) => name.toLowerCase() === domain)?.[1];
    if (schedule) out.push({ domain, ...warmupDay(schedule, now, domain) });
  }
  return out;
}
