import type {
  AutomationEventRecord,
  ClaimedRun,
  RunAdvance,
  RunCounts,
  RunRecord,
  StepCounts,
  StepMove,
  WorkflowRecord,
  WorkflowStatus,
  WorkflowVersionRecord,
} from './automation-records.js';
import type { OutboxWrite } from './event-records.js';

/** What `trackEvent` writes in one transaction. */
export interface TrackWrite {
  event: AutomationEventRecord;
  /**
   * Runs to start, each with its outbox rows (`automation.run_started`); one whose (workflow, contact,
   * entry key) is taken is skipped, its rows with it.
   */
  runs: Array<{ run: RunRecord; outbox?: OutboxWrite }>;
}

/** Options of {@link AutomationStore.claimRuns}. */
export interface RunClaimOptions {
  now: Date;
  /** At most this many runs. */
  limit: number;
  /** The lease: claimed runs are not claimed again before `now + leaseMs`. */
  leaseMs: number;
}

/**
 * Automations (issue 39): workflows with versions, tracked events, and runs claimed with leases as
 * deliveries are. The core decides which runs start and where they go; the store keeps the rows and
 * makes the claims and the fenced writes atomic.
 */
export interface AutomationStore {
  /** Write a new workflow and its version 1, in one transaction. */
  createWorkflow(workflow: WorkflowRecord, version: WorkflowVersionRecord): Promise<void>;
  /** A workflow of the project (deleted ones included), or undefined. */
  getWorkflow(projectId: string, id: string): Promise<WorkflowRecord | undefined>;
  /** The project's workflows that are not deleted, by creation (then id). */
  listWorkflows(projectId: string): Promise<WorkflowRecord[]>;
  /** The active workflows of the project whose current version's trigger is `event`. */
  findTriggered(projectId: string, event: string): Promise<WorkflowRecord[]>;
  /** One version of a workflow's definition. */
  getWorkflowVersion(workflowId: string, version: number): Promise<WorkflowVersionRecord | undefined>;
  /**
   * Compare-and-set: write `version` (whose number is `expected + 1`) and make it current with `trigger`
   * and `name`, only if the workflow's current version is still `expected` and it is not deleted. Returns the
   * workflow as written, or undefined when it lost (the caller re-reads). Runs keep their version.
   */
  writeWorkflowVersion(
    projectId: string,
    expected: number,
    change: { name: string; trigger: string; version: WorkflowVersionRecord },
  ): Promise<WorkflowRecord | undefined>;
  /**
   * Set a workflow's status. `deleted` also makes its active runs due at `now`, so that a worker ends
   * them. Returns false when the workflow does not exist or is already deleted.
   */
  setWorkflowStatus(projectId: string, id: string, status: WorkflowStatus, now: Date): Promise<boolean>;

  /**
   * Record a tracked event and start its runs, in one transaction (on the app's when called through
   * `withTransaction`): nothing is written, and `recorded` is false, when the project already has an event
   * with this id. A run whose (workflow, contact, entry key) is taken is skipped, never an error, even
   * under concurrent calls. Every other active run of the contact that `listens` to the event's name is
   * woken: made due at the event's time, and its wake count raised. Each started run counts as `entered`
   * at its step (`countSteps`), in the same transaction. Returns the runs it started.
   */
  trackEvent(write: TrackWrite): Promise<{ recorded: boolean; started: RunRecord[] }>;
  /** The contact's events named in `names` at or after `since`, by time (then id), at most `limit`. */
  findEvents(
    projectId: string,
    contact: string,
    names: readonly string[],
    since: Date,
    limit: number,
  ): Promise<AutomationEventRecord[]>;

  /**
   * Claim due active runs (`dueAt <= now`, not leased or the lease expired) of workflows that are not
   * paused, earliest due first, with a lease until `now + leaseMs`: each returned run holds a new lease
   * token. A run is returned to at most one caller per lease, under concurrent claimers.
   */
  claimRuns(options: RunClaimOptions): Promise<ClaimedRun[]>;
  /**
   * Write a run's next state, fenced: only if it still holds `leaseToken`. `release`: give the lease up
   * (else keep it, to run the next step). A wake since the claim (the wake count is no longer `wakeSeq`)
   * keeps the run due at once instead of at `advance.dueAt`, so no wake is lost. An ended run whose entry
   * key was `active` gets its id as the key (one-at-a-time frees the slot). `moves` are added to the
   * workflow's step counters (`countSteps`) in the same transaction. Returns false, writing nothing (its
   * `outbox` rows and moves neither), for a stale token.
   */
  advanceRun(
    runId: string,
    leaseToken: number,
    advance: RunAdvance,
    options: { release: boolean; wakeSeq: number; now: Date; moves?: readonly StepMove[] },
    outbox?: OutboxWrite,
  ): Promise<boolean>;
  /** A run of the project. */
  getRun(projectId: string, id: string): Promise<RunRecord | undefined>;
  /** A workflow's runs, newest first (then id), `after` a run id, at most `limit`; of one status when given. */
  listRuns(
    projectId: string,
    workflowId: string,
    page: { after?: string | null; limit: number; status?: RunRecord['status'] },
  ): Promise<RunRecord[]>;
  /**
   * Erase a contact from automations (a data-subject erasure): delete its tracked events and its runs,
   * active ones included, in one transaction; an active run erased counts as `exited` at its step
   * (`countSteps`). Returns how many rows went.
   */
  eraseAutomationContact(projectId: string, contact: string): Promise<number>;
  /** Counts of a workflow's runs: active ones per step, and by status. */
  countRuns(projectId: string, workflowId: string): Promise<RunCounts>;
  /**
   * A workflow's counts per step id (steps no run reached are absent), read from counters the store
   * keeps with the runs' writes (`trackEvent`, `advanceRun`, `eraseAutomationContact`): no run is read.
   */
  countSteps(projectId: string, workflowId: string): Promise<Record<string, StepCounts>>;
}
