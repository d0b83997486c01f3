import { inAppTransaction } from '../accept/app-transaction.js';
import { MailroomError } from '../base/errors.js';
import { newId } from '../base/ids.js';
import type { AuthContext } from '../context/auth-context.js';
import type { BaseContext } from '../context/base-context.js';
import type { ResolveAuth } from '../context/capability.js';
import { authenticateSecret, isAuthContext } from '../keys/authenticate.js';
import { validationError } from '../request/index.js';
import type { RunRecord, StepCounts, WorkflowRecord } from '../store/automation-records.js';
import type { AutomationEvents } from './automation-events.js';
import type {
  AutomationsFacade,
  RunView,
  TrackOptions,
  WorkflowStats,
  WorkflowView,
} from './automation-types.js';
import type { RunWorker } from './run-worker.js';
import { trackEvent } from './track-event.js';
import { parseWorkflow, type WorkflowDefinition } from './workflow-schema.js';
import { definitionOf } from './workflow-versions.js';

/**
 * `mailroom.track` and `mailroom.automations`: tracked events, workflows with versions, their runs.
 * Every call is scoped to the caller's project (another project's workflow is `NOT_FOUND`).
 */
export function createAutomationsApi(
  ctx: BaseContext,
  parts: { resolveAuth: ResolveAuth; worker: RunWorker },
): AutomationsFacade {
  const { store, clock } = ctx;
  const { resolveAuth, worker } = parts;
  const projectOf = async (auth: string | AuthContext) => (await resolveAuth(auth)).project.id;

  async function find(projectId: string, id: string): Promise<WorkflowRecord> {
    const workflow = await store.getWorkflow(projectId, id);
    if (!workflow || workflow.status === 'deleted') {
      throw new MailroomError('NOT_FOUND', `Workflow ${id} not found`);
    }
    return workflow;
  }

  async function view(workflow: WorkflowRecord): Promise<WorkflowView> {
    return {
      id: workflow.id,
      name: workflow.name,
      status: workflow.status,
      version: workflow.version,
      trigger: workflow.trigger,
      definition: await definitionOf(store, workflow.id, workflow.version),
      runs: await store.countRuns(workflow.projectId, workflow.id),
      createdAt: workflow.createdAt,
      updatedAt: workflow.updatedAt,
    };
  }

  /** Parses a definition and checks what needs the project: every send step's template exists. */
  async function definitionFor(projectId: string, input: unknown): Promise<WorkflowDefinition> {
    const definition = parseWorkflow(input);
    const issues = [];
    for (const [i, step] of definition.steps.entries()) {
      if (step.type === 'update-contact') {
        for (const key of Object.keys(step.topics ?? {})) {
          if (!(await store.getTopic(projectId, key))) {
            issues.push({ code: 'custom', path: ['steps', i, 'topics', key], message: `No topic ${key}` });
          }
        }
        for (const ref of Object.keys(step.groups ?? {})) {
          if (!(await store.getGroup(projectId, ref))) {
            issues.push({ code: 'custom', path: ['steps', i, 'groups', ref], message: `No group ${ref}` });
          }
        }
      }
      if (step.type === 'webhook') {
        const endpoint = await store.getWebhookEndpoint(step.endpoint);
        if (!endpoint || endpoint.projectId !== projectId) {
          const message = `No webhook endpoint ${step.endpoint}`;
          issues.push({ code: 'custom', path: ['steps', i, 'endpoint'], message });
        }
      }
      if (step.type !== 'send') continue;
      if (!(await store.getTemplate(projectId, step.template))) {
        issues.push({
          code: 'custom',
          path: ['steps', i, 'template'],
          message: `No template ${step.template}`,
        });
      }
    }
    if (issues.length > 0) throw validationError(issues);
    return definition;
  }

  async function setStatus(auth: string | AuthContext, id: string, status: WorkflowRecord['status']) {
    const projectId = await projectOf(auth);
    await find(projectId, id);
    await store.setWorkflowStatus(projectId, id, status, clock.now());
    return find(projectId, id);
  }

  return {
    async track(auth, input, options: TrackOptions = {}) {
      const { transaction } = options;
      if (transaction === undefined) {
        const { project, mode } = await resolveAuth(auth);
        const now = clock.now();
        const result = await trackEvent(store, { projectId: project.id, mode }, input, now, ctx.outbox);
        const events = ctx.events.view<AutomationEvents>();
        for (const run of result.runs) {
          events.emit('automationRunStarted', {
            projectId: run.projectId,
            workflowId: run.workflowId,
            runId: run.id,
            contact: run.contact,
          });
        }
        const { runs: _runs, ...answer } = result;
        return answer;
      }
      // In the app's transaction: every read and write through it, no in-process event (it may roll back).
      return inAppTransaction(store, transaction, async (bound) => {
        const { project, mode } = isAuthContext(auth)
          ? auth
          : await authenticateSecret(bound, auth as string, clock.now());
        const { runs: _runs, ...answer } = await trackEvent(
          bound,
          { projectId: project.id, mode },
          input,
          clock.now(),
          ctx.outbox,
        );
        return answer;
      });
    },

    automations: {
      async create(auth, input) {
        const projectId = await projectOf(auth);
        const definition = await definitionFor(projectId, input);
        const now = clock.now();
        const workflow: WorkflowRecord = {
          id: newId('wf', now.getTime()),
          projectId,
          name: definition.name,
          status: 'active',
          version: 1,
          trigger: definition.trigger.event,
          createdAt: now,
          updatedAt: now,
        };
        await store.createWorkflow(workflow, {
          workflowId: workflow.id,
          version: 1,
          definition: definition as unknown as Record<string, unknown>,
          createdAt: now,
        });
        return view(workflow);
      },

      async list(auth) {
        const workflows = await store.listWorkflows(await projectOf(auth));
        return Promise.all(workflows.map(view));
      },

      async get(auth, id) {
        return view(await find(await projectOf(auth), id));
      },

      async update(auth, id, input) {
        const projectId = await projectOf(auth);
        const definition = await definitionFor(projectId, input);
        for (;;) {
          const current = await find(projectId, id);
          const written = await store.writeWorkflowVersion(projectId, current.version, {
            name: definition.name,
            trigger: definition.trigger.event,
            version: {
              workflowId: id,
              version: current.version + 1,
              definition: definition as unknown as Record<string, unknown>,
              createdAt: clock.now(),
            },
          });
          if (written) return view(written);
        }
      },

      async pause(auth, id) {
        return view(await setStatus(auth, id, 'paused'));
      },
      async resume(auth, id) {
        return view(await setStatus(auth, id, 'active'));
      },
      async delete(auth, id) {
        const projectId = await projectOf(auth);
        await find(projectId, id);
        await store.setWorkflowStatus(projectId, id, 'deleted', clock.now());
      },

      async stats(auth, id) {
        const workflow = await find(await projectOf(auth), id);
        return workflowStats(
          workflow,
          await definitionOf(store, workflow.id, workflow.version),
          await store.countSteps(workflow.projectId, workflow.id),
        );
      },

      async runs(auth, id, page = {}) {
        const projectId = await projectOf(auth);
        await find(projectId, id);
        const runs = await store.listRuns(projectId, id, {
          after: page.after ?? null,
          limit: Math.min(Math.max(page.limit ?? 100, 1), 1000),
          ...(page.status ? { status: page.status } : {}),
        });
        return runs.map(runView);
      },

      runDue: () => worker.runDue(),
    },
  };
}

/** The current version's steps in order with their counts, then the steps only earlier versions have. */
function workflowStats(
  workflow: WorkflowRecord,
  definition: WorkflowDefinition,
  counts: Record<string, StepCounts>,
): WorkflowStats {
  const row = (id: string, type: string | null): WorkflowStats['steps'][number] => {
    const { entered = 0, passed = 0, exited = 0 } = counts[id] ?? {};
    return { id, type, entered, waiting: Math.max(entered - passed - exited, 0), passed, exited };
  };
  const current = new Set(definition.steps.map((s) => s.id));
  return {
    workflow: workflow.id,
    version: workflow.version,
    steps: [
      ...definition.steps.map((s) => row(s.id, s.type)),
      ...Object.keys(counts)
        .filter((id) => !current.has(id))
        .sort()
        .map((id) => row(id, null)),
    ],
  };
}

function runView(r: RunRecord): RunView {
  return {
    id: r.id,
    workflow: r.workflowId,
    version: r.version,
    contact: r.contact,
    status: r.status,
    step: r.step,
    dueAt: r.dueAt,
    triggerEventId: r.triggerEventId,
    endReason: r.endReason,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
  };
}
