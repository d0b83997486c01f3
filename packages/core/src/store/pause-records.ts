/** The records of pauses that events carry too (no imports: `event-records.ts` reads them). */

/**
 * What a pause stops: one broadcast, a project's whole sending, or one destination of a project (a
 * recipient domain, or a group of domains named by the destination mapping).
 */
export type PauseScope = 'broadcast' | 'project' | 'destination';

/** The figures of the reputation guard's rule that decided a pause (`PauseRecord.rule`). */
export interface PauseRule {
  /** The rule's name, e.g. `broadcast.hard-bounces`, `destination.sender-side`. */
  name: string;
  /** What was counted: `hard-bounce`, `complaint` or `sender-side`. */
  signal: string;
  /** How many of them in the window. */
  count: number;
  /** Out of how many attempts in the window. */
  attempts: number;
  /** `count / attempts`. */
  rate: number;
  /** The rule's threshold: a rate above it pauses. */
  threshold: number;
  /** The rule's minimum: fewer `count` (or `attempts`, per rule) never pause. */
  minimum: number;
  /** The window counted, in milliseconds (the broadcast's whole life for broadcast rules: null). */
  windowMs: number | null;
  /** Start of the window counted. */
  since: string | null;
}
