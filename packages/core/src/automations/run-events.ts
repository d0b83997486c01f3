import type { EventOutbox } from '../events/event-outbox.js';
import type { RunRecord } from '../store/automation-records.js';
import type { OutboxWrite } from '../store/event-records.js';

/**
 * The outbox rows of a run's start or end (`automation.run_started`, `automation.run_completed`,
 * `automation.run_exited`), handed to the store with the write that starts or ends it: the event and
 * the change commit together (invariant 10).
 */
export function runEvent(
  outbox: EventOutbox,
  run: RunRecord,
  type: 'automation.run_started' | 'automation.run_completed' | 'automation.run_exited',
  now: Date,
  reason?: string,
): Promise<OutboxWrite> {
  return outbox.event(
    run.projectId,
    type,
    now,
    { mailingRef: null, deliveryId: null, address: run.contact },
    {
      address: run.contact,
      automation: {
        workflow_id: run.workflowId,
        run_id: run.id,
        version: run.version,
        trigger_event_id: run.triggerEventId,
        ...(reason === undefined ? {} : { reason }),
      },
    },
  );
}
