import { isMailroomError } from '../base/errors.js';
import { derivedId } from '../base/ids.js';
import type { BaseContext } from '../context/base-context.js';
import type { CapabilitySetup } from '../context/capability.js';
import type { ClaimedRun, WorkflowRecord } from '../store/automation-records.js';
import { type StepOutcome, waiting } from './run-place.js';
import type { Step, WorkflowDefinition } from './workflow-schema.js';

/** How long a run waits before its send step is tried again after a failure the store may get over. */
export const RETRY_MS = 60_000;

/** What running a claimed run needs from the engine. */
export interface RunParts {
  ctx: BaseContext;
  send: CapabilitySetup['send'];
  /**
   * A run's workflow, read once per claimed batch (its runs are mostly of a few workflows); without it,
   * the store's, per run. A workflow deleted or paused during the batch is seen by the next claim.
   */
  workflowOf?: (projectId: string, workflowId: string) => Promise<WorkflowRecord | undefined>;
}

/**
 * A `send` step: its message, then the run's next place written before anything else happens (a crash
 * after that write never repeats the send). A failure the store may get over waits `RETRY_MS`; one the
 * send path refuses ends the run.
 */
export async function sendStepOutcome(
  parts: RunParts,
  run: ClaimedRun,
  step: Extract<Step, { type: 'send' }>,
  definition: WorkflowDefinition,
  now: Date,
): Promise<StepOutcome> {
  const sent = await sendStep(parts, run, step);
  if (sent === 'retry')
    return { wait: { ...waiting(run, definition), dueAt: new Date(now.getTime() + RETRY_MS) } };
  if (typeof sent === 'string') return { end: 'exited', reason: `failed: ${sent}` };
  return { go: 'next', write: true, ...(sent.ref ? { sent: sent.ref } : {}) };
}

/**
 * Sends a step's message through the normal send path (sender, template, suppressions, topics and the
 * guard apply as to any send) under a ref derived from the run and the step (`stepMessageRef`). The store
 * keeps a ref once per project (`commitBatch` refuses a second with `CONFLICT`, in the same transaction as
 * the message), so the step's message is committed exactly once however an earlier attempt ended: one that
 * died before its commit left nothing (the message is sent now), one after it left the message (found by
 * its ref: the step is done), and a second commit racing a late first one is `CONFLICT`, never a second
 * message. No idempotency key: the ref is what makes a repeat a no-op, and a key would cost two more
 * writes per step (its row written, then finished) for nothing the ref does not already give. `sent`,
 * `retry` (the store may get over it), or why it cannot be sent (the run ends with it).
 */
async function sendStep(
  parts: RunParts,
  run: ClaimedRun,
  step: Extract<Step, { type: 'send' }>,
): Promise<{ ref: string | null } | 'retry' | string> {
  const { store } = parts.ctx;
  const project = await store.getProject(run.projectId);
  if (!project) return 'the project is gone';
  const profile = await store.getProfile(run.projectId, run.contact);
  const body = {
    sender: step.sender,
    template: {
      ref: step.template,
      variables: { event: run.data, contact: { ...(profile?.traits ?? {}), address: run.contact } },
    },
    recipients: run.contact,
    ...(step.topic ? { options: { topic: step.topic } } : {}),
  };
  const ref = stepMessageRef(run, step.id);
  try {
    await parts.send({ project, mode: run.mode }, body, {
      ref,
      tags: [{ name: AUTOMATION_TAG, value: run.workflowId }],
    });
    return { ref };
  } catch (error) {
    // The message under the step's ref exists: an earlier attempt committed it (it died before writing
    // the run's next place, or its commit was reported as failed). Sent once; not again.
    if (isMailroomError(error, 'CONFLICT') && (await store.getMailing(run.projectId, ref)) !== undefined)
      return { ref };
    if (isMailroomError(error) && (error as { retryable?: boolean }).retryable) return 'retry';
    if (isMailroomError(error)) return (error as Error).message;
    throw error;
  }
}

/**
 * The tag every message of an automation carries (its value: the workflow's id): a message event of such a
 * message starts no workflow (`builtin-triggers.ts`), so that workflows cannot start each other endlessly.
 */
export const AUTOMATION_TAG = 'mailroom.automation';

/**
 * The ref of a send step's message (`msg_…`, shaped as any message's): derived from the run and the
 * step (a step is reached at most once per run: a definition has no cycle), so every attempt of the step
 * names the same message and the store writes it once. The seed `automation:<run>:<step>` was the step's
 * idempotency key before the ref alone made a repeat a no-op; it stays, so that refs of runs started
 * before stay the same.
 */
export function stepMessageRef(run: Pick<ClaimedRun, 'id' | 'startedAt'>, stepId: string): string {
  return derivedId('msg', run.startedAt.getTime(), `automation:${run.id}:${stepId}`);
}
