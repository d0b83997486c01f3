import type { BaseContext } from '../context/base-context.js';
import type { EventSeriesRow } from '../store/activity-store.js';
import type { PauseRule } from '../store/pause-store.js';
import { describeRule } from './describe-rule.js';
import { GUARD_DEFAULTS, type ProjectGuardRules } from './guard-options.js';
import { pause } from './pause-control.js';

/** Buckets of the project window: a minute each, so the window holds `windowSends` give or take a minute. */
const BUCKET_MS = 60_000;
/**
 * The window is read newest first, in spans of these lengths (each reaching further back): a busy project
 * fills its window from its last seconds, so a round reads about `windowSends` events rather than every
 * event of a quarter hour (at 2,000 messages a second, 1.8 million rows each round on every worker), and
 * the store never scans its whole day. Up to 150 s the spans start short and grow by at most 2.5x, so a
 * round stops within about 2.5 times the window at any steady rate above 7 sends a second: every worker
 * reads up to four rounds a second, and a first span of 10 s read ten seconds of events each time (at 900
 * messages a second, 9,000 events per round and worker; on PostgreSQL with two workers, 33 events read
 * per delivery at 358 a second against 11-14 with these spans, issue 42).
 */
const SPANS_MS = [1_000, 2_000, 5_000, 10_000, 25_000, 60_000, 150_000, 900_000, 7_200_000];

/** The project rule of the reputation guard: `check(projectId, now)` judges one project's window. */
export interface ProjectGuardRule {
  /**
   * Judge the project's last `windowSends` sends (every worker's: the store's `email.sent`,
   * `email.bounced` and `email.failed` events) and pause its sending when their recipient-hard bounces
   * pass the rule. `paused`: the project is paused now (then it is not judged). Returns 1 when it wrote
   * the pause.
   */
  check(projectId: string, now: number, paused: boolean): Promise<number>;
}

/**
 * The rule. A bounce reported later (a DSN) counts in the window it arrives in, and its send counts too,
 * so such a bounce weighs a little less than a refusal at the relay (at 5 %, it reads 4.76 %).
 */
export function createProjectGuardRule(ctx: BaseContext, rules: ProjectGuardRules = {}): ProjectGuardRule {
  const p = { ...GUARD_DEFAULTS.project, ...rules };

  /**
   * The newest buckets holding at least `windowSends` sends (all of them if fewer), after the project's
   * last resume: a resume (`broadcast.resumed`, of any scope) is an operator's word that sending may go
   * on, so what came before it is not held against the project again, in any process.
   */
  async function window(projectId: string, now: number): Promise<Window> {
    const rows: EventSeriesRow[] = [];
    let floor = now - p.maxWindowMs;
    let end = now + 1;
    for (const span of [...SPANS_MS, p.maxWindowMs]) {
      const from = Math.max(floor, now + 1 - span);
      if (from >= end) continue;
      rows.push(
        ...(await ctx.store.countEventSeries(projectId, {
          from: new Date(from),
          to: new Date(end),
          bucketMs: BUCKET_MS,
        })),
      );
      end = from;
      const resumed = rows.filter((row) => row.type === 'broadcast.resumed').map((row) => row.bucket);
      if (resumed.length > 0) floor = Math.max(floor, Math.max(...resumed) + BUCKET_MS);
      if (resumed.length > 0 || rows.reduce((n, row) => n + sendsOf(row), 0) >= p.windowSends) break;
    }
    return newest(
      rows.filter((row) => row.bucket >= floor),
      p.windowSends,
      floor,
    );
  }

  return {
    async check(projectId, now, paused) {
      if (paused) return 0;
      const w = await window(projectId, now);
      const rate = w.sends === 0 ? 0 : w.hard / w.sends;
      if (w.sends < p.hardBounceMinSends || rate <= p.hardBounceRate) return 0;
      const rule: PauseRule = {
        name: 'project.hard-bounces',
        signal: 'hard-bounce',
        count: w.hard,
        attempts: w.sends,
        rate,
        threshold: p.hardBounceRate,
        minimum: p.hardBounceMinSends,
        windowMs: now - w.since,
        since: new Date(w.since).toISOString(),
      };
      const written = await pause(
        ctx,
        { projectId, scope: 'project' },
        { by: 'guard', reason: describeRule(rule), rule },
      );
      return written ? 1 : 0;
    },
  };
}

/** The sends and recipient-hard bounces of a window, and where it starts. */
interface Window {
  sends: number;
  hard: number;
  since: number;
}

/** A row's sends: handed to a relay and sent, refused (bounced) or failed. */
function sendsOf(row: EventSeriesRow): number {
  return row.type === 'email.sent' || row.type === 'email.bounced' || row.type === 'email.failed'
    ? row.count
    : 0;
}

/** The newest whole buckets whose sends reach `limit`. */
function newest(rows: readonly EventSeriesRow[], limit: number, floor: number): Window {
  const byBucket = new Map<number, { sends: number; hard: number }>();
  for (const row of rows) {
    const b = byBucket.get(row.bucket) ?? { sends: 0, hard: 0 };
    b.sends += sendsOf(row);
    if (row.type === 'email.bounced' && row.variant === 'recipient-hard') b.hard += row.count;
    byBucket.set(row.bucket, b);
  }
  const out: Window = { sends: 0, hard: 0, since: floor };
  for (const bucket of [...byBucket.keys()].sort((x, y) => y - x)) {
    if (out.sends >= limit) break;
    const b = byBucket.get(bucket) as { sends: number; hard: number };
    out.sends += b.sends;
    out.hard += b.hard;
    out.since = Math.max(bucket, floor);
  }
  return out;
}
