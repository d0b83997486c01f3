import type { Clock } from '../base/base-types.js';
import { MailroomError } from '../base/errors.js';

/**
 * Render time a project may spend per minute, in milliseconds of render-thread time. Generous for people
 * previewing (a real template renders in a few milliseconds), tight for a template built to spin: at the
 * per-part render limit (1 s), ten runaway previews use it up.
 */
export const DEFAULT_RENDER_MS_PER_MINUTE = 10_000;

/**
 * A project's render time as a token bucket: `msPerMinute` of capacity, refilled continuously. A render is
 * charged after it ran (its cost is known only then), so the balance may go below zero; the project is
 * refused until it is back above zero. O(1) per call and one small record per project seen.
 */
export interface RenderBudget {
  /** @throws MailroomError `RATE_LIMITED` with `retryAfter` (seconds) while the project's balance is spent. */
  check(projectId: string): void;
  /** Charges `ms` of render time to the project. */
  charge(projectId: string, ms: number): void;
  /** Seconds until the project may render again (0: now). */
  waitSeconds(projectId: string): number;
}

interface Balance {
  tokens: number;
  at: number;
}

/** The render budget of every project, `msPerMinute` each. */
export function createRenderBudget(
  clock: Clock,
  msPerMinute: number = DEFAULT_RENDER_MS_PER_MINUTE,
): RenderBudget {
  const rate = msPerMinute / 60_000;
  const balances = new Map<string, Balance>();

  const balance = (projectId: string): Balance => {
    const now = clock.now().getTime();
    let b = balances.get(projectId);
    if (!b) {
      b = { tokens: msPerMinute, at: now };
      balances.set(projectId, b);
    } else {
      b.tokens = Math.min(msPerMinute, b.tokens + (now - b.at) * rate);
      b.at = now;
      // A full balance is the default: forgetting it keeps the map to the projects rendering now.
      if (b.tokens >= msPerMinute && balances.size > 1_000) balances.delete(projectId);
    }
    return b;
  };

  const budget: RenderBudget = {
    waitSeconds(projectId) {
      // A project never charged has its full balance: no record is made for it (every delivery asks).
      if (!balances.has(projectId)) return 0;
      const { tokens } = balance(projectId);
      return tokens >= 0 ? 0 : Math.max(1, Math.ceil(-tokens / rate / 1000));
    },
    check(projectId) {
      const wait = budget.waitSeconds(projectId);
      if (wait > 0) {
        throw new MailroomError(
          'RATE_LIMITED',
          `This project used its render time (${msPerMinute} ms per minute); try again in ${wait} s`,
          { retryAfter: wait },
        );
      }
    },
    charge(projectId, ms) {
      balance(projectId).tokens -= ms;
    },
  };
  return budget;
}
