import type { Clock } from '../base/base-types.js';
import type { RenderBudget } from '../render/render-budget.js';

/**
 * Render time of one delivery that is free: a real email renders in well under a millisecond to a few
 * (BENCHMARKS.md, `delivery-corpus`), so a broadcast's normal renders never touch the budget, whatever
 * its size; what a render takes past this is charged.
 */
export const FREE_RENDER_MS = 20;

/** A render this long marks its project slow: its next renders go to the slow lane (`render-lane.ts`). */
export const SLOW_RENDER_MS = 100;

/** How long a project stays on the slow lane after its last slow render. */
export const SLOW_FOR_MS = 60_000;

/** Slow marks kept at most (the oldest is forgotten first: it renders on the shared threads again). */
const MAX_SLOW_MARKS = 10_000;

/**
 * The render time of sends, per project, in the render budget previews use (`render/render-budget.ts`):
 * a project whose templates spin pays with its own deliveries' waiting, never with other projects' mail.
 */
export interface SendRenderGuard {
  /** Seconds the project's deliveries wait before they render (0: now). O(1), no record made. */
  waitSeconds(projectId: string): number;
  /** A render of the project took `ms` on its thread: charged past {@link FREE_RENDER_MS}. */
  rendered(projectId: string, ms: number): void;
  /** The project's render held a shared render thread (a runaway): it renders on the slow lane. */
  markSlow(projectId: string): void;
  /** Whether the project's renders go to the slow lane now. */
  isSlow(projectId: string): boolean;
  /** The budget's size, for messages. */
  readonly msPerMinute: number;
}

/** The send render guard over `budget` (the engine's, shared with previews). */
export function createSendRenderGuard(
  budget: RenderBudget,
  clock: Clock,
  msPerMinute: number,
): SendRenderGuard {
  const slowUntil = new Map<string, number>();
  const mark = (projectId: string) => {
    slowUntil.delete(projectId);
    if (slowUntil.size >= MAX_SLOW_MARKS) slowUntil.delete(slowUntil.keys().next().value as string);
    slowUntil.set(projectId, clock.now().getTime() + SLOW_FOR_MS);
  };
  return {
    msPerMinute,
    waitSeconds: (projectId) => budget.waitSeconds(projectId),
    rendered(projectId, ms) {
      if (ms <= FREE_RENDER_MS) return;
      budget.charge(projectId, ms - FREE_RENDER_MS);
      if (ms >= SLOW_RENDER_MS) mark(projectId);
    },
    markSlow: mark,
    isSlow(projectId) {
      if (slowUntil.size === 0) return false;
      const until = slowUntil.get(projectId);
      if (until === undefined) return false;
      if (until > clock.now().getTime()) return true;
      slowUntil.delete(projectId);
      return false;
    },
  };
}
