/**
 * The records of automations (issue 39): workflows and their versions, the events an app tracks, and the
 * runs that carry a contact through a workflow's steps. The definitions are JSON the core validated
 * (`automations/workflow-schema.ts`); the store keeps them as they are.
 */

/** A workflow's state: `active` starts and advances runs; `paused` keeps its runs waiting; `deleted` ends them. */
export type WorkflowStatus = 'active' | 'paused' | 'deleted';

/** A workflow as stored: its current version's trigger (for the lookup by event) and its state. */
export interface WorkflowRecord {
  /** `wf_…` */
  id: string;
  projectId: string;
  name: string;
  status: WorkflowStatus;
  /** The current version (1 for a new workflow); new runs start on it. */
  version: number;
  /** The event name that starts a run, of the current version. */
  trigger: string;
  createdAt: Date;
  updatedAt: Date;
}

/** One version of a workflow's definition; runs keep the version they started on. */
export interface WorkflowVersionRecord {
  workflowId: string;
  version: number;
  /** The validated definition (`WorkflowDefinition`), as JSON. */
  definition: Record<string, unknown>;
  createdAt: Date;
}

/** An event the app tracked for a contact; its id is unique per project (a repeat is a no-op). */
export interface AutomationEventRecord {
  projectId: string;
  /** The app's id of the event, or one the engine made (`evt_…`). */
  id: string;
  /** `cart.abandoned` */
  name: string;
  /** The contact's normalized address. */
  contact: string;
  properties: Record<string, unknown>;
  at: Date;
}

/** A run's state: `active` until it `completed` its steps or `exited` (an exit event, its workflow deleted). */
export type RunStatus = 'active' | 'completed' | 'exited';

/** One contact's way through one version of a workflow. */
export interface RunRecord {
  /** `run_…` */
  id: string;
  projectId: string;
  workflowId: string;
  /** The workflow's version the run started on, and keeps. */
  version: number;
  contact: string;
  /** The id of the event that started it. */
  triggerEventId: string;
  /**
   * The workflow's re-entry rule as a key, unique per (workflow, contact) among the rows: the trigger
   * event id (every time), `once` (once ever), `active` while it runs (one at a time; the run's own id
   * once it ends, which frees the slot). A run whose key is taken is not started.
   */
  entryKey: string;
  /** Whether a sandbox key tracked the starting event (its messages are recorded, never delivered). */
  mode: 'live' | 'sandbox';
  status: RunStatus;
  /** The id of the step it is at (null once ended). */
  step: string | null;
  /** When it arrived at the step (events of a wait for an event count from then). */
  stepStartedAt: Date;
  /** When a worker should look at it next (null once ended). */
  dueAt: Date | null;
  /** The deadline of the wait it is in, if any. */
  timerAt: Date | null;
  /** Event names that should wake it now (its exit events, the event it waits for). */
  listens: string[];
  /** The starting event's properties (variables of its messages, read by conditions). */
  data: Record<string, unknown>;
  /** The messages its send steps sent: step id to the message's ref (conditions on opens and clicks read them). */
  sent: Record<string, string>;
  /** Why it ended: `completed`, `exit-step`, `exit-event:<name>`, `workflow-deleted`. */
  endReason: string | null;
  startedAt: Date;
  updatedAt: Date;
  endedAt: Date | null;
}

/** A run claimed by a worker: its lease token fences what it writes, `wakeSeq` tells a wake since the claim. */
export interface ClaimedRun extends RunRecord {
  leaseToken: number;
  /** Counts the wakes (`trackEvent`); compared on release so that a wake during the lease is not lost. */
  wakeSeq: number;
}

/** What a worker writes for a run after a step: where it is, or how it ended. */
export interface RunAdvance {
  status: RunStatus;
  /** The messages sent so far (see `RunRecord.sent`). */
  sent: Record<string, string>;
  step: string | null;
  stepStartedAt: Date;
  dueAt: Date | null;
  timerAt: Date | null;
  listens: string[];
  endReason: string | null;
  /** When the run ended, with `status` not `active`; its `entryKey` then becomes its id if it was `active`. */
  endedAt: Date | null;
}

/** What a run did at a step: arrived (`entered`), moved on (`passed`), or ended there (`exited`). */
export type StepMoveKind = 'entered' | 'passed' | 'exited';

/** One move of a run at a step, counted by the store in the same write as the run's new place. */
export interface StepMove {
  /** The step's id. */
  step: string;
  kind: StepMoveKind;
}

/**
 * A step's counts of runs, over the workflow's life (every version; a step is named by its id): kept by
 * the store as counters written with each run's moves, so reading them scans no run.
 */
export interface StepCounts {
  /** Runs that arrived at the step (a run's start counts at its first step). */
  entered: number;
  /** Runs that moved on from it (to the next step, or to the end: completed). */
  passed: number;
  /** Runs that ended there: an exit step or event, a failure, the workflow deleted, the contact erased. */
  exited: number;
}

/** Counts of a workflow's runs per step (active runs) and per end. */
export interface RunCounts {
  /** Active runs at each step id. */
  atStep: Record<string, number>;
  active: number;
  completed: number;
  exited: number;
}
