/** The events of automations (part of `MailroomEvents`). */
export interface AutomationEvents {
  /** A tracked event started a run (emitted once the event is written; inside an app transaction, not at all). */
  automationRunStarted: (event: {
    projectId: string;
    workflowId: string;
    runId: string;
    contact: string;
  }) => void;
  /** A run ended: `completed` its steps, or `exited` (an exit event, an exit step, its workflow deleted). */
  automationRunEnded: (event: {
    projectId: string;
    workflowId: string;
    runId: string;
    contact: string;
    status: 'completed' | 'exited';
    reason: string;
  }) => void;
}
