import type { EventRecord, EventType } from './event-records.js';

/** Which events `countEventSeries` counts, and into which buckets. */
export interface EventSeriesQuery {
  /** The first instant counted (inclusive). */
  from: Date;
  /** The end of the range (exclusive). */
  to: Date;
  /** The width of a bucket in milliseconds: a positive safe integer (a minute, an hour, a day). */
  bucketMs: number;
  /** Only the events of this mailing (by ref). */
  mailingRef?: string;
  /**
   * Only the events whose `address` is at one of these domains (lower-case, without `@`): a destination.
   * An entry `name.*` matches `name.` followed by anything (a destination group's pattern: `hotmail.*`).
   * An empty list counts nothing.
   */
  domains?: readonly string[];
}

/** Which events `listEventsBetween` lists. */
export interface EventRangeQuery {
  /** The first instant listed (inclusive). */
  from: Date;
  /** The end of the range (exclusive). */
  to: Date;
  /** Only events of these types; an empty list lists nothing. */
  types: readonly EventType[];
  /** Only the events of this mailing (by ref). */
  mailingRef?: string;
  /** At most this many: the earliest. */
  limit: number;
}

/** The count of one kind of event in one time bucket. */
export interface EventSeriesRow {
  /** The bucket's start, in milliseconds since the epoch: `createdAt - createdAt % bucketMs`. */
  bucket: number;
  type: EventType;
  /**
   * What splits a type into series: for `email.bounced` the bounce's class (`data.bounce.class`); for
   * `email.opened` and `email.clicked`, `machine` or `human` (`data.machine`); null for every other type.
   */
  variant: string | null;
  /** How many events of the project fell in the bucket with that type and variant (at least 1). */
  count: number;
}

/**
 * Time series over the event outbox: the role of a `Store` behind the dashboard's activity charts. A
 * read with no guarantee between concurrent writes but that each event is counted at most once.
 */
export interface ActivityStore {
  /**
   * The project's events in `[from, to)` that match `query`, counted per bucket, type and variant; rows
   * with a zero count are left out; in no particular order. Events of other projects are never counted.
   */
  countEventSeries(projectId: string, query: EventSeriesQuery): Promise<EventSeriesRow[]>;
  /**
   * The project's events in `[from, to)` of the given types, by `createdAt` then `id`, at most `limit`:
   * the few events a chart draws one by one (pauses and resumes). Events of other projects are never
   * listed. It reads the same range as `countEventSeries`, so it is meant for rare types.
   */
  listEventsBetween(projectId: string, query: EventRangeQuery): Promise<EventRecord[]>;
}
