import type {
  AutomationEventRecord,
  AutomationStore,
  ClaimedRun,
  RunRecord,
  StepCounts,
  StepMove,
  WorkflowRecord,
  WorkflowVersionRecord,
} from '@mailroom/core';
import type { Db } from '../connection/connect.js';
import type { Codec, Row } from '../rows/codec.js';
import type { SqlContext } from '../sql-context.js';
import { writeOutbox } from './event-store.js';

const WORKFLOW_COLUMNS = [
  'id',
  'project_id',
  'name',
  'status',
  'version',
  'trigger_event',
  'created_at',
  'updated_at',
] as const;

const RUN_COLUMNS = [
  'id',
  'project_id',
  'workflow_id',
  'version',
  'contact',
  'trigger_event_id',
  'entry_key',
  'mode',
  'status',
  'step',
  'step_started_at',
  'due_at',
  'timer_at',
  'listens',
  'data',
  'sent',
  'end_reason',
  'started_at',
  'updated_at',
  'ended_at',
] as const;

/** Every column of a run row, the lease's included (a claim returns them all). */
const CLAIM_COLUMNS = [...RUN_COLUMNS, 'lease_expires_at', 'lease_token', 'wake_seq'] as const;

/**
 * `AutomationStore` on SQL (tables of migration `024_automations`). A tracked event is one transaction:
 * the event (insert-or-ignore by its id: a repeat writes nothing more), its runs (insert-or-ignore by the
 * re-entry key), and the wake of the contact's runs that listen to it. Runs are claimed as deliveries are
 * (`FOR UPDATE SKIP LOCKED` on PostgreSQL and MySQL, under the write lock on SQLite).
 */
export function sqlAutomationStore(ctx: SqlContext): AutomationStore {
  const { db, runner, codec, claims, guard, all, first, write, dialect } = ctx;
  const insert = (table: string, columns: readonly string[]) =>
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${runner.values(1, columns.length)}`;

  const insertVersion = (v: WorkflowVersionRecord, on: Db) =>
    write(
      insert('mailroom_workflow_versions', ['workflow_id', 'version', 'definition', 'created_at']),
      [v.workflowId, v.version, codec.json(v.definition), v.createdAt.getTime()],
      on,
    );

  /**
   * Adds `moves` of runs to the step counters (`032_step_counts`), in `tx`, in one statement: summed by
   * row first, rows in key order (concurrent transactions take the counters' locks in one order).
   */
  const count = async (moves: Array<{ workflowId: string; runId: string; move: StepMove }>, tx: Db) => {
    const rows = new Map<string, [string, string, number, number, number, number]>();
    for (const { workflowId, runId, move } of moves) {
      const slot = slotOf(runId);
      const k = `${workflowId}\u0000${move.step}\u0000${slot}`;
      const row = rows.get(k) ?? [workflowId, move.step, slot, 0, 0, 0];
      row[move.kind === 'entered' ? 3 : move.kind === 'passed' ? 4 : 5] += 1;
      rows.set(k, row);
    }
    if (rows.size === 0) return;
    const sorted = [...rows].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([, row]) => row);
    const add = dialect.onConflictUpdate(
      'mailroom_automation_step_counts',
      'workflow_id, step, slot',
      ({ stored, incoming }) =>
        ['entered', 'passed', 'exited'].map((c) => `${c} = ${stored(c)} + ${incoming(c)}`),
    );
    await write(
      `INSERT INTO mailroom_automation_step_counts (workflow_id, step, slot, entered, passed, exited) VALUES ${sorted.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}${add}`,
      sorted.flat(),
      tx,
    );
  };

  return {
    createWorkflow(workflow, version) {
      return guard(
        'createWorkflow',
        () =>
          runner.transaction(db, async (tx) => {
            await write(insert('mailroom_workflows', WORKFLOW_COLUMNS), workflowParams(workflow), tx);
            await insertVersion(version, tx);
          }),
        { exists: { what: `workflow ${workflow.id}`, projectId: workflow.projectId } },
      );
    },

    getWorkflow(projectId, id) {
      return guard('getWorkflow', async () => {
        const row = await first('SELECT * FROM mailroom_workflows WHERE project_id = ? AND id = ?', [
          projectId,
          id,
        ]);
        return row ? decodeWorkflow(row) : undefined;
      });
    },

    listWorkflows(projectId) {
      return guard('listWorkflows', async () =>
        (
          await all(
            "SELECT * FROM mailroom_workflows WHERE project_id = ? AND status <> 'deleted' ORDER BY created_at, id",
            [projectId],
          )
        ).map(decodeWorkflow),
      );
    },

    findTriggered(projectId, event) {
      return guard('findTriggered', async () =>
        (
          await all(
            "SELECT * FROM mailroom_workflows WHERE project_id = ? AND trigger_event = ? AND status = 'active' ORDER BY id",
            [projectId, event],
          )
        ).map(decodeWorkflow),
      );
    },

    getWorkflowVersion(workflowId, version) {
      return guard('getWorkflowVersion', async () => {
        const row = await first(
          'SELECT * FROM mailroom_workflow_versions WHERE workflow_id = ? AND version = ?',
          [workflowId, version],
        );
        return row ? decodeVersion(codec, row) : undefined;
      });
    },

    writeWorkflowVersion(projectId, expected, change) {
      const v = change.version;
      return guard('writeWorkflowVersion', () =>
        runner.transaction(db, async (tx) => {
          const moved = await write(
            "UPDATE mailroom_workflows SET version = ?, name = ?, trigger_event = ?, updated_at = ? WHERE project_id = ? AND id = ? AND version = ? AND status <> 'deleted'",
            [
              v.version,
              change.name,
              change.trigger,
              v.createdAt.getTime(),
              projectId,
              v.workflowId,
              expected,
            ],
            tx,
          );
          if (moved === 0) return undefined;
          await insertVersion(v, tx);
          const row = await first('SELECT * FROM mailroom_workflows WHERE id = ?', [v.workflowId], tx);
          return row ? decodeWorkflow(row) : undefined;
        }),
      );
    },

    setWorkflowStatus(projectId, id, status, now) {
      return guard('setWorkflowStatus', () =>
        runner.transaction(db, async (tx) => {
          const t = now.getTime();
          const changed = await write(
            "UPDATE mailroom_workflows SET status = ?, updated_at = ? WHERE project_id = ? AND id = ? AND status <> 'deleted'",
            [status, t, projectId, id],
            tx,
          );
          if (changed === 0) return false;
          if (status === 'deleted') {
            await write(
              "UPDATE mailroom_automation_runs SET due_at = ? WHERE workflow_id = ? AND status = 'active'",
              [t, id],
              tx,
            );
          }
          return true;
        }),
      );
    },

    trackEvent({ event, runs }) {
      return guard('trackEvent', () =>
        runner.transaction(db, async (tx) => {
          const recorded = await write(
            dialect.insertIgnore(
              'mailroom_automation_events',
              'project_id, id, name, contact, properties, at',
              runner.values(1, 6),
              'project_id, id',
            ),
            [
              event.projectId,
              event.id,
              event.name,
              event.contact,
              codec.json(event.properties),
              event.at.getTime(),
            ],
            tx,
          );
          if (recorded === 0) return { recorded: false, started: [] as RunRecord[] };
          // Wake first, so that the runs this event starts are not counted as woken.
          await write(
            "UPDATE mailroom_automation_runs SET due_at = ?, wake_seq = wake_seq + 1 WHERE project_id = ? AND contact = ? AND status = 'active' AND listens LIKE ?",
            [event.at.getTime(), event.projectId, event.contact, `%,${event.name},%`],
            tx,
          );
          const started: RunRecord[] = [];
          const text = dialect.insertIgnore(
            'mailroom_automation_runs',
            RUN_COLUMNS.join(', '),
            runner.values(1, RUN_COLUMNS.length),
            'workflow_id, contact, entry_key',
          );
          for (const { run, outbox } of runs) {
            if ((await write(text, runParams(codec, run), tx)) === 0) continue;
            if (outbox) await writeOutbox(runner, codec, tx, [outbox]);
            started.push(run);
          }
          await count(
            started.flatMap((run) =>
              run.step === null
                ? []
                : [{ workflowId: run.workflowId, runId: run.id, move: { step: run.step, kind: 'entered' } }],
            ),
            tx,
          );
          return { recorded: true, started };
        }),
      );
    },

    findEvents(projectId, contact, names, since, limit) {
      return guard('findEvents', async () => {
        if (names.length === 0) return [];
        const rows = await all(
          `SELECT * FROM mailroom_automation_events WHERE project_id = ? AND contact = ? AND name IN ${runner.values(1, names.length)} AND at >= ? ORDER BY at, id LIMIT ?`,
          [projectId, contact, ...names, since.getTime(), limit],
        );
        return rows.map((row) => decodeEvent(codec, row));
      });
    },

    claimRuns({ now, limit, leaseMs }) {
      return guard('claimRuns', async () => {
        const t = now.getTime();
        return claims.claim(db, {
          table: 'mailroom_automation_runs',
          due: "d.status = 'active' AND d.due_at <= ? AND d.lease_expires_at <= ? AND NOT EXISTS (SELECT 1 FROM mailroom_workflows w WHERE w.id = d.workflow_id AND w.status = 'paused') ORDER BY d.due_at, d.id",
          dueParams: [t, t],
          limit,
          mysqlIndex: 'mailroom_automation_runs_due',
          set: 'lease_expires_at = ?, lease_token = lease_token + 1, updated_at = ?',
          setParams: [t + leaseMs, t],
          columns: CLAIM_COLUMNS,
          decode: (row): ClaimedRun => ({
            ...decodeRun(codec, row),
            leaseToken: Number(row.lease_token),
            wakeSeq: Number(row.wake_seq),
          }),
        });
      });
    },

    advanceRun(runId, leaseToken, advance, { release, wakeSeq, now, moves = [] }, outbox) {
      return guard('advanceRun', () =>
        runner.transaction(db, async (tx) => {
          const due = advance.dueAt?.getTime() ?? null;
          const ended = advance.status !== 'active';
          // A wake since the claim (wake_seq moved) keeps the earlier due time the wake wrote.
          const dueSet = ended
            ? 'due_at = ?'
            : 'due_at = CASE WHEN wake_seq <> ? AND due_at < ? THEN due_at ELSE ? END';
          const dueParams = ended ? [due] : [wakeSeq, due, due];
          const sets = [
            'status = ?',
            'step = ?',
            'step_started_at = ?',
            dueSet,
            'timer_at = ?',
            'listens = ?',
            'sent = ?',
            'end_reason = ?',
            'ended_at = ?',
            'updated_at = ?',
            ...(release ? ['lease_expires_at = 0'] : []),
            ...(ended ? ["entry_key = CASE WHEN entry_key = 'active' THEN id ELSE entry_key END"] : []),
          ];
          const changed = await write(
            `UPDATE mailroom_automation_runs SET ${sets.join(', ')} WHERE id = ? AND lease_token = ? AND status = 'active'`,
            [
              advance.status,
              advance.step,
              advance.stepStartedAt.getTime(),
              ...dueParams,
              advance.timerAt?.getTime() ?? null,
              listensText(advance.listens),
              codec.json(advance.sent),
              advance.endReason,
              advance.endedAt?.getTime() ?? null,
              now.getTime(),
              runId,
              leaseToken,
            ],
            tx,
          );
          if (changed === 0) return false;
          if (outbox) await writeOutbox(runner, codec, tx, [outbox]);
          if (moves.length > 0) {
            const row = await first(
              'SELECT workflow_id FROM mailroom_automation_runs WHERE id = ?',
              [runId],
              tx,
            );
            const workflowId = String(row?.workflow_id);
            await count(
              moves.map((move) => ({ workflowId, runId, move })),
              tx,
            );
          }
          return true;
        }),
      );
    },

    getRun(projectId, id) {
      return guard('getRun', async () => {
        const row = await first('SELECT * FROM mailroom_automation_runs WHERE project_id = ? AND id = ?', [
          projectId,
          id,
        ]);
        return row ? decodeRun(codec, row) : undefined;
      });
    },

    listRuns(projectId, workflowId, page) {
      return guard('listRuns', async () => {
        const where = ['project_id = ?', 'workflow_id = ?'];
        const params: unknown[] = [projectId, workflowId];
        if (page.status) {
          where.push('status = ?');
          params.push(page.status);
        }
        if (page.after) {
          const cursor = await first(
            'SELECT started_at, id FROM mailroom_automation_runs WHERE id = ? AND project_id = ?',
            [page.after, projectId],
          );
          if (!cursor) return [];
          const at = Number(cursor.started_at);
          where.push('(started_at < ? OR (started_at = ? AND id < ?))');
          params.push(at, at, page.after);
        }
        const rows = await all(
          `SELECT * FROM mailroom_automation_runs WHERE ${where.join(' AND ')} ORDER BY started_at DESC, id DESC LIMIT ?`,
          [...params, page.limit],
        );
        return rows.map((row) => decodeRun(codec, row));
      });
    },

    eraseAutomationContact(projectId, contact) {
      return guard('eraseAutomationContact', () =>
        runner.transaction(db, async (tx) => {
          const events = await write(
            'DELETE FROM mailroom_automation_events WHERE project_id = ? AND contact = ?',
            [projectId, contact],
            tx,
          );
          // An active run erased leaves the workflow at its step: counted as exited there (after the
          // delete, so that the counters' locks come after the runs', as in every other write).
          const active = await all(
            "SELECT id, workflow_id, step FROM mailroom_automation_runs WHERE project_id = ? AND contact = ? AND status = 'active' AND step IS NOT NULL",
            [projectId, contact],
            tx,
          );
          const runs = await write(
            'DELETE FROM mailroom_automation_runs WHERE project_id = ? AND contact = ?',
            [projectId, contact],
            tx,
          );
          await count(
            active.map((r) => ({
              workflowId: String(r.workflow_id),
              runId: String(r.id),
              move: { step: String(r.step), kind: 'exited' },
            })),
            tx,
          );
          return events + runs;
        }),
      );
    },

    countRuns(projectId, workflowId) {
      return guard('countRuns', async () => {
        const rows = await all(
          'SELECT status, step, COUNT(*) AS n FROM mailroom_automation_runs WHERE project_id = ? AND workflow_id = ? GROUP BY status, step',
          [projectId, workflowId],
        );
        const counts = { atStep: {} as Record<string, number>, active: 0, completed: 0, exited: 0 };
        for (const row of rows) {
          const status = String(row.status) as RunRecord['status'];
          const n = Number(row.n);
          counts[status] += n;
          if (status === 'active' && row.step !== null) {
            const step = String(row.step);
            counts.atStep[step] = (counts.atStep[step] ?? 0) + n;
          }
        }
        return counts;
      });
    },

    countSteps(projectId, workflowId) {
      return guard('countSteps', async () => {
        const rows = await all(
          'SELECT c.step, SUM(c.entered) AS entered, SUM(c.passed) AS passed, SUM(c.exited) AS exited FROM mailroom_automation_step_counts c JOIN mailroom_workflows w ON w.id = c.workflow_id WHERE w.project_id = ? AND c.workflow_id = ? GROUP BY c.step',
          [projectId, workflowId],
        );
        const counts: Record<string, StepCounts> = {};
        for (const row of rows) {
          counts[String(row.step)] = {
            entered: Number(row.entered),
            passed: Number(row.passed),
            exited: Number(row.exited),
          };
        }
        return counts;
      });
    },
  };
}

/** How many rows each step's counter is split into: concurrent workers seldom write the same one. */
const COUNTER_SLOTS = 8;

/** The counter row of a run's moves: a hash of its id, so that the runs spread over the slots. */
function slotOf(runId: string): number {
  let h = 0;
  for (let i = 0; i < runId.length; i++) h = (h * 31 + runId.charCodeAt(i)) | 0;
  return Math.abs(h) % COUNTER_SLOTS;
}

/** The names a run listens to, as `,a,b,` (names have no comma), for the wake's `LIKE`. */
function listensText(names: readonly string[]): string {
  return names.length === 0 ? '' : `,${names.join(',')},`;
}

function workflowParams(w: WorkflowRecord): unknown[] {
  return [
    w.id,
    w.projectId,
    w.name,
    w.status,
    w.version,
    w.trigger,
    w.createdAt.getTime(),
    w.updatedAt.getTime(),
  ];
}

function runParams(codec: Codec, r: RunRecord): unknown[] {
  const ms = (d: Date | null) => (d === null ? null : d.getTime());
  return [
    r.id,
    r.projectId,
    r.workflowId,
    r.version,
    r.contact,
    r.triggerEventId,
    r.entryKey,
    r.mode,
    r.status,
    r.step,
    r.stepStartedAt.getTime(),
    ms(r.dueAt),
    ms(r.timerAt),
    listensText(r.listens),
    codec.json(r.data),
    codec.json(r.sent),
    r.endReason,
    r.startedAt.getTime(),
    r.updatedAt.getTime(),
    ms(r.endedAt),
  ];
}

const date = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(Number(v)));
const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function decodeWorkflow(row: Row): WorkflowRecord {
  return {
    id: String(row.id),
    projectId: String(row.project_id),
    name: String(row.name),
    status: String(row.status) as WorkflowRecord['status'],
    version: Number(row.version),
    trigger: String(row.trigger_event),
    createdAt: new Date(Number(row.created_at)),
    updatedAt: new Date(Number(row.updated_at)),
  };
}

function decodeVersion(codec: Codec, row: Row): WorkflowVersionRecord {
  return {
    workflowId: String(row.workflow_id),
    version: Number(row.version),
    definition: codec.fromJson<Record<string, unknown>>(row.definition),
    createdAt: new Date(Number(row.created_at)),
  };
}

function decodeEvent(codec: Codec, row: Row): AutomationEventRecord {
  return {
    projectId: String(row.project_id),
    id: String(row.id),
    name: String(row.name),
    contact: String(row.contact),
    properties: codec.fromJson<Record<string, unknown>>(row.properties),
    at: new Date(Number(row.at)),
  };
}

function decodeRun(codec: Codec, row: Row): RunRecord {
  const listens = String(row.listens ?? '');
  return {
    id: String(row.id),
    projectId: String(row.project_id),
    workflowId: String(row.workflow_id),
    version: Number(row.version),
    contact: String(row.contact),
    triggerEventId: String(row.trigger_event_id),
    entryKey: String(row.entry_key),
    mode: String(row.mode) as RunRecord['mode'],
    status: String(row.status) as RunRecord['status'],
    step: text(row.step),
    stepStartedAt: new Date(Number(row.step_started_at)),
    dueAt: date(row.due_at),
    timerAt: date(row.timer_at),
    listens: listens === '' ? [] : listens.slice(1, -1).split(','),
    data: codec.fromJson<Record<string, unknown>>(row.data),
    sent: codec.fromJson<Record<string, string>>(row.sent),
    endReason: text(row.end_reason),
    startedAt: new Date(Number(row.started_at)),
    updatedAt: new Date(Number(row.updated_at)),
    endedAt: date(row.ended_at),
  };
}
