import { isTimeZone, nextLocalTime, parseClockTime } from '../base/local-time.js';
import type { BaseContext } from '../context/base-context.js';
import type { ClaimedRun } from '../store/automation-records.js';
import { firstEvent, type StepOutcome, waiting } from './run-place.js';
import { durationMs, type Step, type WorkflowDefinition } from './workflow-schema.js';

type WaitStep = Extract<Step, { type: 'wait' | 'wait-for-event' }>;

/**
 * A `wait` or `wait-for-event` step: moves on once its timer passed (or the awaited event came), else
 * sleeps until the timer, listening to the events that should wake it sooner (`trackEvent`). A wait
 * counts from the run's arrival at the step, however late a worker looks at it.
 */
export async function waitStep(
  ctx: BaseContext,
  run: ClaimedRun,
  step: WaitStep,
  definition: WorkflowDefinition,
  now: Date,
): Promise<StepOutcome> {
  const startedAt = run.stepStartedAt;
  const timerAt = run.timerAt ?? (await timerOf(ctx, run, step, startedAt));
  if (step.type === 'wait-for-event' && (await firstEvent(ctx, run, [step.event], startedAt))) {
    return { go: 'onEvent' };
  }
  if (now.getTime() >= timerAt.getTime()) return { go: step.type === 'wait' ? 'next' : 'onTimeout' };
  const listens = step.type === 'wait-for-event' ? [...definition.exitOn, step.event] : definition.exitOn;
  return {
    wait: { ...waiting(run, definition), stepStartedAt: startedAt, timerAt, dueAt: timerAt, listens },
  };
}

/**
 * When a wait that began at `startedAt` ends: after its duration, or at the next `until` time of day in
 * the contact's zone (its timezone trait; UTC when it has none or an unknown one).
 */
async function timerOf(ctx: BaseContext, run: ClaimedRun, step: WaitStep, startedAt: Date): Promise<Date> {
  if (step.type === 'wait-for-event') return new Date(startedAt.getTime() + durationMs(step.timeout));
  if (step.duration !== undefined) return new Date(startedAt.getTime() + durationMs(step.duration));
  const profile = await ctx.store.getProfile(run.projectId, run.contact);
  const zone = profile?.traits[step.timezoneTrait ?? 'timezone'];
  const at = parseClockTime(step.until ?? '') ?? 0;
  return new Date(nextLocalTime(startedAt.getTime(), at, isTimeZone(zone) ? zone : 'UTC'));
}
