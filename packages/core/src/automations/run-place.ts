import type { BaseContext } from '../context/base-context.js';
import type { ClaimedRun, RunAdvance } from '../store/automation-records.js';
import type { OutboxWrite } from '../store/event-records.js';
import type { WorkflowDefinition } from './workflow-schema.js';

/**
 * What a step did, for the walker (`run-steps.ts`): move on along one of its branches, sleep where it
 * is, or end the run.
 */
export type StepOutcome =
  | {
      /** The branch to take (`next`, `onEvent`, `onTimeout`, `onTrue`, `onFalse`). */
      go: string;
      /**
       * Write the run's next place before the next step: the step did something outside the run (a
       * send, a webhook call), so that a crash after it never repeats it.
       */
      write?: boolean;
      /** Outbox rows written with that place (a webhook step's call). */
      outbox?: OutboxWrite;
      /** The ref of the message a send step sent. */
      sent?: string;
    }
  /** Stay at the step: written as it is (its timer, or a retry). */
  | { wait: RunAdvance }
  | { end: 'completed' | 'exited'; reason: string };

/** The run's place as it is, active, listening to its exit events. */
export function waiting(run: ClaimedRun, definition: WorkflowDefinition): RunAdvance {
  return { ...waitingAsIs(run), listens: definition.exitOn };
}

/** The run's place as it is, its listens included. */
export function waitingAsIs(run: ClaimedRun): RunAdvance {
  return {
    status: 'active',
    sent: run.sent,
    step: run.step,
    stepStartedAt: run.stepStartedAt,
    dueAt: run.dueAt,
    timerAt: run.timerAt,
    listens: run.listens,
    endReason: null,
    endedAt: null,
  };
}

/** The first of `names` the contact got at or after `since`, the starting event left out. */
export async function firstEvent(
  ctx: BaseContext,
  run: ClaimedRun,
  names: readonly string[],
  since: Date,
): Promise<string | undefined> {
  if (names.length === 0) return undefined;
  const events = await ctx.store.findEvents(run.projectId, run.contact, names, since, 2);
  return events.find((e) => e.id !== run.triggerEventId)?.name;
}
