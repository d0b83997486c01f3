/**
 * The reputation guard's rules over a chart's buckets: for each rule, what it counts and how near that is
 * to pausing. A rule pauses when its count is at least its minimum and its rate above its threshold, so
 * a chart draws `level = min(rate / threshold, figure / minimum)`: above 1 (100 %), the guard pauses.
 * Figures are counted from the same events as the chart's lines.
 */
import { GUARD_DEFAULTS, type ReputationGuardOptions } from '../pauses/guard-options.js';
import type { ActivitySeriesName } from './activity-names.js';

/** One rule of the guard over a chart's buckets. */
export interface GuardLine {
  /** The guard's name of the rule: `broadcast.hard-bounces`, `broadcast.complaints`, `broadcast.sender-side`, `destination.sender-side`. */
  rule: string;
  /** The series it counts. */
  signal: ActivitySeriesName;
  /** The rate above which it pauses (0.05 for 5 %). */
  threshold: number;
  /** The least figure at which it pauses... */
  minimum: number;
  /** ...of attempts (`broadcast.hard-bounces`) or of the count itself. */
  minimumOf: 'attempts' | 'count';
  /** What each bucket's figures cover: `life` (since the start or the last resume) or a rolling window (ms). */
  basis: 'life' | number;
  /** The rule's own window (ms; null: the broadcast's life): wider `basis` when the buckets are wider. */
  windowMs: number | null;
  /** Per bucket, at its end: the signal's count and the attempts (sent + failed) in the basis. */
  counts: number[];
  attempts: number[];
  /** Per bucket: `min(rate / threshold, figure / minimum)`; the guard pauses above 1. */
  levels: number[];
}

/** The level of one bucket's figures under a rule. */
function levelOf(
  count: number,
  attempts: number,
  rule: Omit<GuardLine, 'counts' | 'attempts' | 'levels'>,
): number {
  const rate = attempts === 0 ? (count > 0 ? 1 : 0) : count / attempts;
  const figure = rule.minimumOf === 'attempts' ? attempts : count;
  return Math.min(rate / rule.threshold, figure / Math.max(1, rule.minimum));
}

/** Per bucket, the sum of the last `width` buckets of `values` (this one included), or the running sum restarted at `resets`. */
function accumulate(values: readonly number[], width: number | null, resets: ReadonlySet<number>): number[] {
  const out: number[] = [];
  let sum = 0;
  values.forEach((v, i) => {
    if (width === null) {
      if (resets.has(i)) sum = 0;
      sum += v;
    } else {
      sum += v - (i >= width ? (values[i - width] ?? 0) : 0);
    }
    out.push(sum);
  });
  return out;
}

/**
 * The guard's lines of a chart: a broadcast's three rules counted over its life (restarted at each
 * resume, as the guard does: `resumedAt` are bucket indexes), or for a project or destination the
 * destination rule over its rolling window (a bucket at least). None when the guard is off.
 */
export function guardLines(
  series: Readonly<Record<ActivitySeriesName, readonly number[]>>,
  bucketMs: number,
  options: ReputationGuardOptions | false | undefined,
  broadcast: { resumedAt: ReadonlySet<number> } | undefined,
): GuardLine[] {
  if (options === false) return [];
  const attemptsPerBucket = series.sent.map((s, i) => s + (series.failed[i] ?? 0));
  const make = (
    spec: Omit<GuardLine, 'counts' | 'attempts' | 'levels'>,
    width: number | null,
    resets: ReadonlySet<number>,
  ): GuardLine => {
    const counts = accumulate(series[spec.signal], width, resets);
    const attempts = accumulate(attemptsPerBucket, width, resets);
    return { ...spec, counts, attempts, levels: counts.map((c, i) => levelOf(c, attempts[i] ?? 0, spec)) };
  };
  if (broadcast) {
    const b = { ...GUARD_DEFAULTS.broadcast, ...options?.broadcast };
    const specs: Array<Omit<GuardLine, 'counts' | 'attempts' | 'levels'>> = [
      {
        rule: 'broadcast.hard-bounces',
        signal: 'bounced.recipient-hard',
        threshold: b.hardBounceRate,
        minimum: b.hardBounceMinAttempts,
        minimumOf: 'attempts',
        basis: 'life',
        windowMs: null,
      },
      {
        rule: 'broadcast.complaints',
        signal: 'complained',
        threshold: b.complaintRate,
        minimum: b.complaintMin,
        minimumOf: 'count',
        basis: 'life',
        windowMs: null,
      },
      {
        rule: 'broadcast.sender-side',
        signal: 'bounced.sender-side',
        threshold: b.senderSideRate,
        minimum: b.senderSideMin,
        minimumOf: 'count',
        basis: 'life',
        windowMs: null,
      },
    ];
    return specs.map((spec) => make(spec, null, broadcast.resumedAt));
  }
  const d = { ...GUARD_DEFAULTS.destination, ...options?.destination };
  const width = Math.max(1, Math.round(d.windowMs / bucketMs));
  return [
    make(
      {
        rule: 'destination.sender-side',
        signal: 'bounced.sender-side',
        threshold: d.senderSideRate,
        minimum: d.senderSideMin,
        minimumOf: 'count',
        basis: width * bucketMs,
        windowMs: d.windowMs,
      },
      width,
      new Set(),
    ),
  ];
}
