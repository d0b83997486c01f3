import { isStoreOutage } from '../base/errors.js';
import type { ClaimedRun, RunAdvance, StepMove } from '../store/automation-records.js';
import type { OutboxWrite } from '../store/event-records.js';
import type { AutomationEvents } from './automation-events.js';
import { runEvent } from './run-events.js';
import { firstEvent, type StepOutcome, waiting, waitingAsIs } from './run-place.js';
import { conditionStep } from './step-condition.js';
import { RETRY_MS, type RunParts, sendStepOutcome } from './step-send.js';
import { updateContactStep } from './step-update-contact.js';
import { waitStep } from './step-wait.js';
import { webhookStep } from './step-webhook.js';
import { branches, type Step, type WorkflowDefinition } from './workflow-schema.js';
import { definitionOf } from './workflow-versions.js';

export type { RunParts } from './step-send.js';

/** The most steps one claim walks through (a definition has at most 100 and no cycle). */
const MAX_STEPS_PER_CLAIM = 200;

/**
 * Walks one claimed run through its steps until it waits or ends, writing its place after each step
 * that did something outside the run (a send, a webhook call) and when it waits or ends, every write
 * fenced by the claim's lease token. A crash repeats at most the step in flight; a send step repeated
 * sends nothing again (its message's ref is derived from the run's id and the step's, and the store keeps
 * a ref once: a step is reached at most once per run, as a definition has no cycle). Each step kind is its own file (`step-*.ts`). The run's moves
 * at steps (entered, passed, exited) since its last write go with the next write, so the store counts
 * each once: a crash before that write repeats the steps and their moves, one after it neither. Returns
 * whether the run advanced or ended.
 */
export async function runClaimed(parts: RunParts, claimed: ClaimedRun): Promise<boolean> {
  const { ctx } = parts;
  const { store, clock, logger } = ctx;
  let run = claimed;
  /** The moves at steps the walk made since the run's last write (`run` is where they led). */
  let moves: StepMove[] = [];
  /** Writes `advance` with the walk's moves and `more` (the step's own); an exit counts at the run's step. */
  const fenced = async (
    advance: RunAdvance,
    release: boolean,
    extra?: OutboxWrite,
    more: StepMove[] = [],
  ): Promise<boolean> => {
    const now = clock.now();
    const exited: StepMove[] =
      advance.status === 'exited' && run.step !== null ? [{ step: run.step, kind: 'exited' }] : [];
    const type =
      advance.status === 'completed'
        ? 'automation.run_completed'
        : advance.status === 'exited'
          ? 'automation.run_exited'
          : undefined;
    const ended = type
      ? await runEvent(ctx.outbox, run, type, now, advance.endReason ?? undefined)
      : undefined;
    const outbox =
      ended && extra
        ? { events: [...extra.events, ...ended.events], messages: [...extra.messages, ...ended.messages] }
        : (extra ?? ended);
    const ok = await store.advanceRun(
      run.id,
      run.leaseToken,
      advance,
      { release, wakeSeq: run.wakeSeq, now, moves: [...moves, ...more, ...exited] },
      outbox,
    );
    if (ok) {
      run = { ...run, ...advance, updatedAt: now };
      moves = [];
    }
    if (ok && advance.status !== 'active') {
      ctx.events.view<AutomationEvents>().emit('automationRunEnded', {
        projectId: run.projectId,
        workflowId: run.workflowId,
        runId: run.id,
        contact: run.contact,
        status: advance.status,
        reason: advance.endReason ?? advance.status,
      });
    }
    return ok;
  };
  const end = (status: 'completed' | 'exited', reason: string): RunAdvance => {
    const now = clock.now();
    return {
      status,
      sent: run.sent,
      step: null,
      stepStartedAt: now,
      dueAt: null,
      timerAt: null,
      listens: [],
      endReason: reason,
      endedAt: now,
    };
  };

  try {
    const workflow = parts.workflowOf
      ? await parts.workflowOf(run.projectId, run.workflowId)
      : await store.getWorkflow(run.projectId, run.workflowId);
    if (!workflow || workflow.status === 'deleted') return fenced(end('exited', 'workflow-deleted'), true);
    const definition = await definitionOf(store, run.workflowId, run.version);
    for (let walked = 0; walked < MAX_STEPS_PER_CLAIM; walked++) {
      const now = clock.now();
      const exit = await firstEvent(ctx, run, definition.exitOn, run.startedAt);
      if (exit) return fenced(end('exited', `exit-event:${exit}`), true);
      const index = definition.steps.findIndex((s) => s.id === run.step);
      const step = definition.steps[index];
      if (!step) return fenced(end('completed', 'completed'), true);
      const outcome = await runStep(parts, run, step, definition, now);
      if ('wait' in outcome) return fenced(outcome.wait, true);
      if ('end' in outcome) return fenced(end(outcome.end, outcome.reason), true);
      if (outcome.sent) run = { ...run, sent: { ...run.sent, [step.id]: outcome.sent } };
      // The branch taken: the step is passed, the next one entered (or the run completed).
      const to =
        branches(step, definition.steps[index + 1]?.id).find(([f]) => f === outcome.go)?.[1] ?? 'end';
      const passed: StepMove[] = [{ step: step.id, kind: 'passed' }];
      if (to !== 'end') passed.push({ step: to, kind: 'entered' });
      const next: RunAdvance =
        to === 'end'
          ? end('completed', 'completed')
          : { ...waiting(run, definition), step: to, stepStartedAt: now, dueAt: now, timerAt: null };
      if (next.status !== 'active') return fenced(next, true, outcome.outbox, passed);
      if (outcome.write) {
        if (!(await fenced(next, false, outcome.outbox, passed))) return false;
        continue;
      }
      run = { ...run, ...next };
      moves.push(...passed);
    }
    // A definition cannot get here (no cycle, at most 100 steps); leave the run for the next claim.
    return fenced({ ...waiting(run, definition), dueAt: clock.now() }, true);
  } catch (error) {
    // Never a crash of the worker: the run waits and is tried again.
    if (!isStoreOutage(error))
      logger.error({ err: error, runId: run.id }, 'automation run failed; retrying later');
    await store
      .advanceRun(
        run.id,
        run.leaseToken,
        { ...waitingAsIs(run), dueAt: new Date(clock.now().getTime() + RETRY_MS) },
        // The place written is the one walked to: the moves that led there go with it.
        { release: true, wakeSeq: run.wakeSeq, now: clock.now(), moves },
      )
      .catch(() => undefined);
    return false;
  }
}

/** Runs one step of the kind it is (each kind in its own `step-*.ts`). */
function runStep(
  parts: RunParts,
  run: ClaimedRun,
  step: Step,
  definition: WorkflowDefinition,
  now: Date,
): Promise<StepOutcome> {
  switch (step.type) {
    case 'wait':
    case 'wait-for-event':
      return waitStep(parts.ctx, run, step, definition, now);
    case 'send':
      return sendStepOutcome(parts, run, step, definition, now);
    case 'condition':
      return conditionStep(parts.ctx, run, step);
    case 'update-contact':
      return updateContactStep(parts.ctx, run, step);
    case 'webhook':
      return webhookStep(parts.ctx, run, step, now);
    case 'exit':
      return Promise.resolve({ end: 'exited', reason: 'exit-step' });
  }
}
