import type { BaseContext } from '../context/base-context.js';
import type { ClaimedRun } from '../store/automation-records.js';
import type { OutboxWrite } from '../store/event-records.js';
import type { StepOutcome } from './run-place.js';
import type { Step } from './workflow-schema.js';

/**
 * A `webhook` step. The call is an event for the one endpoint, written with the run's next place: once,
 * however often the step is repeated before that write; the webhook sender signs, sends and retries it.
 */
export async function webhookStep(
  ctx: BaseContext,
  run: ClaimedRun,
  step: Extract<Step, { type: 'webhook' }>,
  now: Date,
): Promise<StepOutcome> {
  const outbox = await webhookCall(ctx, run, step, now);
  return { go: 'next', write: true, ...(outbox ? { outbox } : {}) };
}

/** The `automation.webhook` event of a webhook step, for its endpoint alone (none when it is gone or disabled). */
async function webhookCall(
  ctx: BaseContext,
  run: ClaimedRun,
  step: Extract<Step, { type: 'webhook' }>,
  now: Date,
): Promise<OutboxWrite | undefined> {
  const endpoint = await ctx.store.getWebhookEndpoint(step.endpoint);
  if (!endpoint || endpoint.projectId !== run.projectId || !endpoint.enabled) return undefined;
  return ctx.outbox.event(
    run.projectId,
    'automation.webhook',
    now,
    { mailingRef: null, deliveryId: null, address: run.contact },
    {
      address: run.contact,
      automation: {
        workflow_id: run.workflowId,
        run_id: run.id,
        version: run.version,
        trigger_event_id: run.triggerEventId,
        step: step.id,
        ...(step.payload ? { payload: step.payload } : {}),
      },
    },
    // Named by the step: it gets the call whatever event types it subscribes to.
    { ...endpoint, events: null },
  );
}
