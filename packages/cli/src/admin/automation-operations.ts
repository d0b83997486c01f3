import type { MailroomClient, Schemas } from '@mailroom/client';
import type {
  AuthContext,
  Mailroom,
  RunStatus,
  RunView,
  TrackResult,
  WorkflowStats,
  WorkflowView,
} from '@mailroom/core';

/**
 * Tracked events, workflows and their runs of one project (issue 39), on this machine's database or
 * through a server's API (`AdminOperations` `automations`). Answers are the engine's views either way.
 */
export interface AutomationOperations {
  track(input: {
    event: string;
    contact: string;
    id?: string;
    properties?: Record<string, unknown>;
  }): Promise<TrackResult>;
  list(): Promise<WorkflowView[]>;
  get(id: string): Promise<WorkflowView>;
  create(definition: unknown): Promise<WorkflowView>;
  update(id: string, definition: unknown): Promise<WorkflowView>;
  pause(id: string): Promise<WorkflowView>;
  resume(id: string): Promise<WorkflowView>;
  remove(id: string): Promise<void>;
  runs(id: string, page: { status?: RunStatus; after?: string; limit?: number }): Promise<RunView[]>;
  stats(id: string): Promise<WorkflowStats>;
}

/** The engine's own calls for the project of `auth`. */
export function localAutomations(mailroom: Mailroom, auth: AuthContext): AutomationOperations {
  const a = mailroom.automations;
  return {
    track: (input) => mailroom.track(auth, input),
    list: () => a.list(auth),
    get: (id) => a.get(auth, id),
    create: (definition) => a.create(auth, definition),
    update: (id, definition) => a.update(auth, id, definition),
    pause: (id) => a.pause(auth, id),
    resume: (id) => a.resume(auth, id),
    remove: (id) => a.delete(auth, id),
    runs: (id, page) => a.runs(auth, id, page),
    stats: (id) => a.stats(auth, id),
  };
}

/** The same through the API (`call` turns the server's refusals into the engine's errors). */
export function remoteAutomations(
  client: MailroomClient,
  call: <T>(work: () => Promise<T>) => Promise<T>,
): AutomationOperations {
  const c = client.automations;
  type Body = Parameters<typeof c.create>[0];
  return {
    track: (input) => call(() => c.track(input)),
    list: () => call(async () => (await c.list()).workflows.map(workflowView)),
    get: (id) => call(async () => workflowView((await c.get(id)).workflow)),
    create: (definition) => call(async () => workflowView((await c.create(definition as Body)).workflow)),
    update: (id, definition) =>
      call(async () => workflowView((await c.update(id, definition as Body)).workflow)),
    pause: (id) => call(async () => workflowView((await c.pause(id)).workflow)),
    resume: (id) => call(async () => workflowView((await c.resume(id)).workflow)),
    remove: (id) =>
      call(async () => {
        await c.remove(id);
      }),
    runs: (id, page) =>
      call(async () =>
        (
          await c.runs(id, {
            ...(page.status ? { status: page.status } : {}),
            ...(page.after ? { cursor: page.after } : {}),
            ...(page.limit ? { limit: page.limit } : {}),
          })
        ).runs.map(runView),
      ),
    stats: (id) =>
      call(async () => {
        const { stats } = await c.stats(id);
        return { ...stats, steps: stats.steps.map((s) => ({ ...s, type: s.type ?? null })) };
      }),
  };
}

/** A workflow of the API's answer as the engine's view: its times as Dates again. */
function workflowView(wire: Schemas['Workflow']): WorkflowView {
  return {
    ...(wire as unknown as WorkflowView),
    createdAt: new Date(wire.createdAt),
    updatedAt: new Date(wire.updatedAt),
  };
}

function runView(wire: Schemas['Run']): RunView {
  const date = (v: string | null | undefined) => (v ? new Date(v) : null);
  return {
    ...wire,
    step: wire.step ?? null,
    endReason: wire.endReason ?? null,
    dueAt: date(wire.dueAt),
    startedAt: new Date(wire.startedAt),
    endedAt: date(wire.endedAt),
  };
}
