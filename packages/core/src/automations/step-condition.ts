import type { BaseContext } from '../context/base-context.js';
import type { ClaimedRun } from '../store/automation-records.js';
import { evaluateCondition } from './condition.js';
import type { StepOutcome } from './run-place.js';
import type { Step } from './workflow-schema.js';

/** A `condition` step: `onTrue` or `onFalse`, on a trait, a property of the starting event, or a message. */
export async function conditionStep(
  ctx: BaseContext,
  run: ClaimedRun,
  step: Extract<Step, { type: 'condition' }>,
): Promise<StepOutcome> {
  const profile =
    step.if.trait === undefined ? undefined : await ctx.store.getProfile(run.projectId, run.contact);
  const holds =
    step.if.message === undefined
      ? evaluateCondition(step.if, profile?.traits ?? {}, run.data)
      : await messageCondition(ctx, run, step.if.message, step.if.op);
  return { go: holds ? 'onTrue' : 'onFalse' };
}

/**
 * Whether the message an earlier send step of the run sent was opened (or clicked) by a person: its
 * `email.opened` / `email.clicked` events, machine ones (privacy proxies, link scanners) left out. False
 * when the step sent nothing.
 */
async function messageCondition(
  ctx: BaseContext,
  run: ClaimedRun,
  stepId: string,
  op: string,
): Promise<boolean> {
  const ref = run.sent[stepId];
  if (!ref) return op === 'not-opened' || op === 'not-clicked';
  const type = op === 'clicked' || op === 'not-clicked' ? 'email.clicked' : 'email.opened';
  const events = await ctx.store.listEvents(run.projectId, { types: [type], mailingRef: ref }, { limit: 50 });
  const human = events.some((e) => e.data.machine !== true);
  return op.startsWith('not-') ? !human : human;
}
