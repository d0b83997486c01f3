/** The reputation guard's rules for a broadcast: counted over the broadcast's whole life. */
export interface BroadcastGuardRules {
  /** Pause when hard bounces pass this share of attempts... @default 0.05 */
  hardBounceRate?: number;
  /** ...once at least this many were attempted. @default 500 */
  hardBounceMinAttempts?: number;
  /** Pause when complaints pass this share of attempts... @default 0.001 */
  complaintRate?: number;
  /** ...and number at least this many. @default 3 */
  complaintMin?: number;
  /** Pause when sender-side refusals (policy, reputation, DMARC, rate) pass this share... @default 0.1 */
  senderSideRate?: number;
  /** ...and number at least this many. @default 20 */
  senderSideMin?: number;
}

/** The reputation guard's rule for a destination (a recipient domain): a timed pause. */
export interface DestinationGuardRules {
  /** Pause when sender-side refusals in the window pass this share of attempts... @default 0.1 */
  senderSideRate?: number;
  /** ...and number at least this many. @default 10 */
  senderSideMin?: number;
  /** The rolling window counted. @default 900_000 (15 minutes) */
  windowMs?: number;
  /** How long the destination stays paused; it resumes by itself. @default 1_800_000 (30 minutes) */
  pauseMs?: number;
}

/**
 * The reputation guard's rule for a project: its sending as a whole (broadcasts and transactional), over
 * its most recent sends. It catches what no broadcast rule sees: many small broadcasts, or transactional
 * mail to a bad list, each under a broadcast's minimum. It pauses the project's sending until resumed.
 */
export interface ProjectGuardRules {
  /** Pause when recipient-hard bounces pass this share of the window's sends... @default 0.05 */
  hardBounceRate?: number;
  /** ...once the window holds at least this many sends. @default 200 */
  hardBounceMinSends?: number;
  /** The window: the project's last this many sends (by every worker). @default 1_000 */
  windowSends?: number;
  /** ...but no sends older than this. @default 86_400_000 (one day) */
  maxWindowMs?: number;
}

/**
 * `createMailroom({ guard })`: the reputation guard, run by every process whose worker runs. It judges
 * every rule as each outcome of its worker is recorded (in-process counters added to the store's figures
 * of its last read), reads the store's counts (attempts by delivery status, bounces, complaints and
 * sender-side refusals by kind, and the pauses in force) every `syncMs` while outcomes flow, and pauses
 * what crosses a rule, with `broadcast.paused` carrying the rule and its figures. `false` turns it off.
 * README, "Pause, resume and the reputation guard", lists the defaults and says how fast it reacts.
 */
export interface ReputationGuardOptions {
  /**
   * How often the store's figures are read when no outcome comes (inbound bounces and complaints of a
   * broadcast that has stopped sending). @default 10_000
   */
  checkMs?: number;
  /**
   * How often the store's figures (every worker's outcomes, and the pauses in force) are read while
   * outcomes flow; a read also waits three times the last one's length, so a slow count never takes
   * more than a quarter of a connection. @default 250
   */
  syncMs?: number;
  broadcast?: BroadcastGuardRules;
  destination?: DestinationGuardRules;
  project?: ProjectGuardRules;
}

/**
 * The reputation guard's options under their first name, which the SQL store's guard of one operation
 * also bore.
 * @deprecated Use {@link ReputationGuardOptions}; this alias goes in the next major version.
 */
export type GuardOptions = ReputationGuardOptions;

/** The defaults, as a careful sender would choose them. */
export const GUARD_DEFAULTS = {
  checkMs: 10_000,
  syncMs: 250,
  broadcast: {
    hardBounceRate: 0.05,
    hardBounceMinAttempts: 500,
    complaintRate: 0.001,
    complaintMin: 3,
    senderSideRate: 0.1,
    senderSideMin: 20,
  },
  destination: { senderSideRate: 0.1, senderSideMin: 10, windowMs: 900_000, pauseMs: 1_800_000 },
  project: { hardBounceRate: 0.05, hardBounceMinSends: 200, windowSends: 1_000, maxWindowMs: 86_400_000 },
} as const;
