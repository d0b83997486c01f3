import type { AutomationStore, ClaimedRun, RunRecord, StepMove } from '@mailroom/core';
import { clone } from '../memory-copy.js';
import type { MemoryRun, State } from '../memory-state.js';
import { compare, exists, key } from '../memory-state.js';
import { writeOutbox } from './event-store.js';

/**
 * `AutomationStore` in memory: workflows, versions, events and runs in maps (see `State.automations`);
 * the re-entry rule's unique key is the set of taken entry keys. Every method runs in one synchronous
 * step, so claims and fenced writes are atomic within the process.
 */
export function memoryAutomationStore(db: () => State): AutomationStore {
  const a = () => db().automations;
  const entryOf = (r: RunRecord) => key(key(r.workflowId, r.contact), r.entryKey);
  const plain = (r: MemoryRun): RunRecord => {
    const { leaseUntil: _l, leaseToken: _t, wakeSeq: _w, ...run } = r;
    return clone(run);
  };

  /** Adds moves to a workflow's step counters. */
  const count = (workflowId: string, moves: readonly StepMove[]) => {
    const steps = a().steps.get(workflowId) ?? new Map();
    a().steps.set(workflowId, steps);
    for (const { step, kind } of moves) {
      const c = steps.get(step) ?? { entered: 0, passed: 0, exited: 0 };
      c[kind] += 1;
      steps.set(step, c);
    }
  };

  return {
    async createWorkflow(workflow, version) {
      const k = key(workflow.projectId, workflow.id);
      if (a().workflows.has(k)) throw exists(`workflow ${workflow.id}`, workflow.projectId);
      a().workflows.set(k, clone(workflow));
      a().versions.set(key(workflow.id, String(version.version)), clone(version));
    },
    async getWorkflow(projectId, id) {
      const w = a().workflows.get(key(projectId, id));
      return w ? clone(w) : undefined;
    },
    async listWorkflows(projectId) {
      return [...a().workflows.values()]
        .filter((w) => w.projectId === projectId && w.status !== 'deleted')
        .sort((x, y) => x.createdAt.getTime() - y.createdAt.getTime() || compare(x.id, y.id))
        .map((w) => clone(w));
    },
    async findTriggered(projectId, event) {
      return [...a().workflows.values()]
        .filter((w) => w.projectId === projectId && w.status === 'active' && w.trigger === event)
        .sort((x, y) => compare(x.id, y.id))
        .map((w) => clone(w));
    },
    async getWorkflowVersion(workflowId, version) {
      const v = a().versions.get(key(workflowId, String(version)));
      return v ? clone(v) : undefined;
    },
    async writeWorkflowVersion(projectId, expected, change) {
      const w = a().workflows.get(key(projectId, change.version.workflowId));
      if (!w || w.status === 'deleted' || w.version !== expected) return undefined;
      a().versions.set(key(w.id, String(change.version.version)), clone(change.version));
      Object.assign(w, {
        name: change.name,
        trigger: change.trigger,
        version: change.version.version,
        updatedAt: new Date(change.version.createdAt),
      });
      return clone(w);
    },
    async setWorkflowStatus(projectId, id, status, now) {
      const w = a().workflows.get(key(projectId, id));
      if (!w || w.status === 'deleted') return false;
      w.status = status;
      w.updatedAt = new Date(now);
      if (status === 'deleted') {
        for (const r of a().runs.values()) {
          if (r.workflowId === id && r.status === 'active') r.dueAt = new Date(now);
        }
      }
      return true;
    },

    async trackEvent({ event, runs }) {
      const s = a();
      const k = key(event.projectId, event.id);
      if (s.events.has(k)) return { recorded: false, started: [] };
      s.events.set(k, clone(event));
      const started: RunRecord[] = [];
      for (const { run, outbox } of runs) {
        if (s.entries.has(entryOf(run)) || s.runs.has(run.id)) continue;
        s.entries.add(entryOf(run));
        s.runs.set(run.id, { ...clone(run), leaseUntil: 0, leaseToken: 0, wakeSeq: 0 });
        writeOutbox(db().outbox, outbox);
        if (run.step !== null) count(run.workflowId, [{ step: run.step, kind: 'entered' }]);
        started.push(clone(run));
      }
      for (const r of s.runs.values()) {
        if (
          r.projectId === event.projectId &&
          r.contact === event.contact &&
          r.status === 'active' &&
          r.listens.includes(event.name) &&
          !started.some((n) => n.id === r.id)
        ) {
          r.dueAt = new Date(event.at);
          r.wakeSeq += 1;
        }
      }
      return { recorded: true, started };
    },
    async findEvents(projectId, contact, names, since, limit) {
      return [...a().events.values()]
        .filter(
          (e) =>
            e.projectId === projectId &&
            e.contact === contact &&
            names.includes(e.name) &&
            e.at.getTime() >= since.getTime(),
        )
        .sort((x, y) => x.at.getTime() - y.at.getTime() || compare(x.id, y.id))
        .slice(0, limit)
        .map((e) => clone(e));
    },

    async claimRuns({ now, limit, leaseMs }) {
      const t = now.getTime();
      const s = a();
      const due = [...s.runs.values()]
        .filter((r) => {
          if (r.status !== 'active' || r.dueAt === null || r.dueAt.getTime() > t || r.leaseUntil > t)
            return false;
          return s.workflows.get(key(r.projectId, r.workflowId))?.status !== 'paused';
        })
        .sort((x, y) => (x.dueAt as Date).getTime() - (y.dueAt as Date).getTime() || compare(x.id, y.id))
        .slice(0, limit);
      return due.map((r): ClaimedRun => {
        r.leaseUntil = t + leaseMs;
        r.leaseToken += 1;
        r.updatedAt = new Date(now);
        return { ...plain(r), leaseToken: r.leaseToken, wakeSeq: r.wakeSeq };
      });
    },
    async advanceRun(runId, leaseToken, advance, { release, wakeSeq, now, moves = [] }, outbox) {
      const s = a();
      const r = s.runs.get(runId);
      if (!r || r.leaseToken !== leaseToken || r.status !== 'active') return false;
      const woken = r.wakeSeq !== wakeSeq;
      const wokenAt = r.dueAt;
      Object.assign(r, clone(advance), { updatedAt: new Date(now) });
      // A wake during the lease keeps the run due from the wake's time: no event is missed.
      if (woken && advance.status === 'active' && wokenAt && (r.dueAt === null || wokenAt < r.dueAt)) {
        r.dueAt = wokenAt;
      }
      if (release) r.leaseUntil = 0;
      writeOutbox(db().outbox, outbox);
      count(r.workflowId, moves);
      if (advance.status !== 'active' && r.entryKey === 'active') {
        s.entries.delete(entryOf(r));
        r.entryKey = r.id;
        s.entries.add(entryOf(r));
      }
      return true;
    },
    async getRun(projectId, id) {
      const r = a().runs.get(id);
      return r && r.projectId === projectId ? plain(r) : undefined;
    },
    async listRuns(projectId, workflowId, page) {
      const all = [...a().runs.values()]
        .filter((r) => r.projectId === projectId && r.workflowId === workflowId)
        .filter((r) => page.status === undefined || r.status === page.status)
        .sort((x, y) => y.startedAt.getTime() - x.startedAt.getTime() || compare(y.id, x.id));
      const from = page.after ? all.findIndex((r) => r.id === page.after) + 1 : 0;
      if (page.after && from === 0) return [];
      return all.slice(from, from + page.limit).map(plain);
    },
    async eraseAutomationContact(projectId, contact) {
      const s = a();
      let removed = 0;
      for (const [k, e] of s.events) {
        if (e.projectId === projectId && e.contact === contact && s.events.delete(k)) removed++;
      }
      for (const [id, r] of s.runs) {
        if (r.projectId !== projectId || r.contact !== contact) continue;
        if (r.status === 'active' && r.step !== null) count(r.workflowId, [{ step: r.step, kind: 'exited' }]);
        s.entries.delete(entryOf(r));
        s.runs.delete(id);
        removed++;
      }
      return removed;
    },
    async countRuns(projectId, workflowId) {
      const counts = { atStep: {} as Record<string, number>, active: 0, completed: 0, exited: 0 };
      for (const r of a().runs.values()) {
        if (r.projectId !== projectId || r.workflowId !== workflowId) continue;
        counts[r.status] += 1;
        if (r.status === 'active' && r.step !== null)
          counts.atStep[r.step] = (counts.atStep[r.step] ?? 0) + 1;
      }
      return counts;
    },
    async countSteps(projectId, workflowId) {
      if (!a().workflows.has(key(projectId, workflowId))) return {};
      return Object.fromEntries([...(a().steps.get(workflowId) ?? [])].map(([step, c]) => [step, { ...c }]));
    },
  };
}
