/**
 * The activity charts' one query layer: the event outbox counted over time (`ActivityStore`) turned
 * into aligned series, per project, per mailing or per destination. The dashboard draws them; `GET`
 * views can serve them as they are.
 */
import { MailroomError } from '../base/errors.js';
import type { AuthContext } from '../engine/auth-context.js';
import type { BaseContext } from '../engine/base-context.js';
import type { ActivityStore, EventSeriesRow } from '../store/activity-store.js';
import type { EventType } from '../store/event-records.js';
import type { MailingRecord } from '../store/records.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Buckets of one chart at most: past this, the range is cut to its most recent part. */
export const MAX_ACTIVITY_BUCKETS = 400;
/** Buckets of one chart at least: a shorter range starts earlier, so that a line has a shape. */
export const MIN_ACTIVITY_BUCKETS = 10;

/** The series of a chart, in the order a legend lists them. */
export const ACTIVITY_SERIES = [
  'sent',
  'deferred',
  'failed',
  'bounced.recipient-hard',
  'bounced.soft',
  'bounced.sender-side',
  'complained',
  'suppressed',
  'opened.human',
  'opened.machine',
  'clicked.human',
  'clicked.machine',
] as const;

/** One series of a chart: what its points count. */
export type ActivitySeriesName = (typeof ACTIVITY_SERIES)[number];

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

/** What to chart. Without `mailingRef`, the whole project; `domains` narrows to a destination. */
export interface ActivityQuery {
  /** One mailing's events (its ref); `NOT_FOUND` for another project's. */
  mailingRef?: string;
  /** Only events to addresses at these domains (a destination). */
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
}

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
  return { from: new Date(first), to, bucketMs, buckets, series, markers };
}

/** What the query borrows from the engine, so that scoping stays defined in one place. */
export interface ActivityQueryDeps {
  resolveAuth(auth: string | AuthContext): Promise<AuthContext>;
  /** The project's mailing by ref; `NOT_FOUND` otherwise. */
  findMailing(auth: string | AuthContext, ref: string): Promise<MailingRecord>;
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
      const rows = await store.countEventSeries(project.id, {
        from,
        to,
        bucketMs,
        ...(mailing ? { mailingRef: mailing.ref } : {}),
        ...(query.domains ? { domains: query.domains } : {}),
      });
      return chartOf(rows, from, to, bucketMs);
    },
  };
}
