import type { AuthContext } from '../context/auth-context.js';
import type { AppTransaction } from '../store/app-transaction-store.js';
import type { RunCounts, RunStatus, WorkflowStatus } from '../store/automation-records.js';
import type { WorkflowDefinition, WorkflowInput } from './workflow-schema.js';

/** An event the app tracks for a contact (`track`, `POST /events/track`). */
export interface TrackInput {
  /** The event's name, 1 to 128 of `A-Z a-z 0-9 . _ : -` (`cart.abandoned`). */
  event: string;
  /** The contact's email address. */
  contact: string;
  /** What the workflow's messages and conditions read (`event.<name>` in templates); at most 64 KiB of JSON. */
  properties?: Record<string, unknown>;
  /** The app's id of the event: a second call with the same id is a no-op. Without it, every call counts. */
  id?: string;
}

/** Options of `track`. */
export interface TrackOptions {
  /**
   * The app's own open transaction on the store's database (as for `send`): the event and the runs it
   * starts commit with the app's rows, or neither. A store not on the app's database refuses
   * (`TRANSACTION_REFUSED`).
   */
  transaction?: AppTransaction;
}

/** What `track` did. */
export interface TrackResult {
  /** The event's id (the app's, or `evt_…`). */
  id: string;
  /** False when an event with this id was already tracked: nothing was done. */
  recorded: boolean;
  /** The runs it started. */
  started: Array<{ run: string; workflow: string }>;
}

/** A workflow as the API shows it. */
export interface WorkflowView {
  /** `wf_…` */
  id: string;
  name: string;
  status: WorkflowStatus;
  /** Its current version (runs keep the one they started on). */
  version: number;
  trigger: string;
  /** The current version's definition. */
  definition: WorkflowDefinition;
  /** Its runs: active ones per step, and by status. */
  runs: RunCounts;
  createdAt: Date;
  updatedAt: Date;
}

/** One step's runs (`automations.stats`), counted over the workflow's life. */
export interface StepStats {
  /** The step's id. */
  id: string;
  /** Its type in the current version; null for a step only an earlier version has. */
  type: string | null;
  /** Runs that arrived at it (a run's start counts at its first step). */
  entered: number;
  /** Runs at it now. */
  waiting: number;
  /** Runs that moved on from it (to the next step, or completed). */
  passed: number;
  /** Runs that ended at it: an exit step or event, a failure, the workflow deleted, the contact erased. */
  exited: number;
}

/** A workflow's runs per step (`automations.stats`), read from the store's counters (no run is read). */
export interface WorkflowStats {
  /** `wf_…` */
  workflow: string;
  /** The current version. */
  version: number;
  /** The current version's steps in order, then steps of earlier versions that runs reached. */
  steps: StepStats[];
}

/** A run as the API shows it. */
export interface RunView {
  /** `run_…` */
  id: string;
  workflow: string;
  version: number;
  contact: string;
  status: RunStatus;
  /** The step it is at (null once ended). */
  step: string | null;
  /** When a worker looks at it next (null once ended). */
  dueAt: Date | null;
  /** The event that started it. */
  triggerEventId: string;
  /** Why it ended: `completed`, `exit-step`, `exit-event:<name>`, `workflow-deleted`, `failed: …`. */
  endReason: string | null;
  startedAt: Date;
  endedAt: Date | null;
}

/** `mailroom.automations`: a project's workflows and their runs. Every call is scoped to the caller's project. */
export interface MailroomAutomations {
  /** Create a workflow from its definition (JSON or `workflow(...).build()`); `VALIDATION_FAILED` names the path. */
  create(auth: string | AuthContext, definition: WorkflowInput | unknown): Promise<WorkflowView>;
  /** The project's workflows (deleted ones left out). */
  list(auth: string | AuthContext): Promise<WorkflowView[]>;
  /** One workflow; `NOT_FOUND` for a deleted one or another project's. */
  get(auth: string | AuthContext, id: string): Promise<WorkflowView>;
  /** Write the next version; runs already started stay on theirs. */
  update(auth: string | AuthContext, id: string, definition: WorkflowInput | unknown): Promise<WorkflowView>;
  /** Pause: no run starts, due steps wait (nothing lost, nothing twice). */
  pause(auth: string | AuthContext, id: string): Promise<WorkflowView>;
  /** Resume a paused workflow: its due steps run. */
  resume(auth: string | AuthContext, id: string): Promise<WorkflowView>;
  /** Delete a workflow: its runs end (`workflow-deleted`) at the next poll. */
  delete(auth: string | AuthContext, id: string): Promise<void>;
  /** A workflow's runs per step: entered, waiting, passed (done), exited. */
  stats(auth: string | AuthContext, id: string): Promise<WorkflowStats>;
  /** A workflow's runs, newest first. */
  runs(
    auth: string | AuthContext,
    id: string,
    page?: { after?: string | null; limit?: number; status?: RunStatus },
  ): Promise<RunView[]>;
  /**
   * Runs every due step now, on this process, until none is due at the clock's time (the background task
   * does it every `automations.pollMs`); returns how many runs it advanced. For tests, scripts and the CLI.
   */
  runDue(): Promise<number>;
}

/** The methods automations add to the engine (`Mailroom` extends it). */
export interface AutomationsFacade {
  /**
   * Track an event of a contact: starts the runs of the workflows it triggers, wakes runs waiting for it
   * and ends the runs it exits. With an `id`, a repeat is a no-op (`recorded: false`).
   */
  track(
    auth: string | AuthContext,
    event: TrackInput | unknown,
    options?: TrackOptions,
  ): Promise<TrackResult>;
  /** Workflows and runs. */
  automations: MailroomAutomations;
}

/** Options of automations (part of `MailroomOptions`). */
export interface AutomationsEngineOptions {
  automations?: {
    /**
     * How often the background task looks for due steps, in ms.
     * @default 1000
     */
    pollMs?: number;
    /**
     * How long a claimed run is held before another worker may take it, in ms.
     * @default 60000
     */
    leaseMs?: number;
    /**
     * Runs claimed at once.
     * @default 50
     */
    batchSize?: number;
    /**
     * While this process's worker is sending a broadcast (a broadcast delivery's outcome in the last 2 s),
     * the most of the time the run worker keeps busy, 0 to 1: after each batch it rests so that its
     * busy time is at most this share. Due steps make single messages, which the delivery queue serves
     * before broadcasts: without a cap, 100,000 runs due at once would hold a broadcast back until they
     * are all sent. 1: no cap.
     * @default 0.05
     */
    shareBesideBroadcasts?: number;
  };
}
