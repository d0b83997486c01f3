import type { Client } from 'openapi-fetch';
import type { CallOptions, OperationBody, OperationQuery, OperationResult } from './client-types.js';
import type { paths } from './openapi-types.js';
import type { ClientHelpers } from './pause-methods.js';

/** Tracked events, workflows and their runs (issue 39). */
export interface AutomationMethods {
  /** `POST /events/track`: `{ event, contact, properties?, id? }`; an `id` makes a repeat a no-op. */
  track(body: OperationBody<'trackEvent'>, options?: CallOptions): Promise<OperationResult<'trackEvent'>>;
  /** `GET /automations`: the project's workflows with their run counts. */
  list(options?: CallOptions): Promise<OperationResult<'listWorkflows'>>;
  /** `POST /automations`: a workflow from its definition (a bad one is 400 naming its path). */
  create(
    definition: OperationBody<'createWorkflow'>,
    options?: CallOptions,
  ): Promise<OperationResult<'createWorkflow'>>;
  /** `GET /automations/{id}`: one workflow with its runs per step. */
  get(id: string, options?: CallOptions): Promise<OperationResult<'getWorkflow'>>;
  /** `PUT /automations/{id}`: the next version (running runs stay on theirs). */
  update(
    id: string,
    definition: OperationBody<'updateWorkflow'>,
    options?: CallOptions,
  ): Promise<OperationResult<'updateWorkflow'>>;
  /** `DELETE /automations/{id}`: its runs end. */
  remove(id: string, options?: CallOptions): Promise<OperationResult<'deleteWorkflow'>>;
  /** `POST /automations/{id}/pause`. */
  pause(id: string, options?: CallOptions): Promise<OperationResult<'pauseWorkflow'>>;
  /** `POST /automations/{id}/resume`. */
  resume(id: string, options?: CallOptions): Promise<OperationResult<'resumeWorkflow'>>;
  /** `GET /automations/{id}/runs`: newest first, `{ status?, cursor?, limit? }`. */
  runs(
    id: string,
    query?: OperationQuery<'listWorkflowRuns'>,
    options?: CallOptions,
  ): Promise<OperationResult<'listWorkflowRuns'>>;
  /** `GET /automations/{id}/stats`: runs entered, waiting, passed and exited at each step. */
  stats(id: string, options?: CallOptions): Promise<OperationResult<'getWorkflowStats'>>;
}

/** The automation methods over `api`. */
export function automationMethods(api: Client<paths>, { init, dataOf }: ClientHelpers): AutomationMethods {
  const id = (value: string) => ({ path: { id: value } });
  return {
    track: (body, call) => dataOf(api.POST('/events/track', { body, ...init(call) })),
    list: (call) => dataOf(api.GET('/automations', init(call))),
    create: (body, call) => dataOf(api.POST('/automations', { body, ...init(call) })),
    get: (value, call) => dataOf(api.GET('/automations/{id}', { params: id(value), ...init(call) })),
    update: (value, body, call) =>
      dataOf(api.PUT('/automations/{id}', { params: id(value), body, ...init(call) })),
    remove: (value, call) => dataOf(api.DELETE('/automations/{id}', { params: id(value), ...init(call) })),
    pause: (value, call) => dataOf(api.POST('/automations/{id}/pause', { params: id(value), ...init(call) })),
    resume: (value, call) =>
      dataOf(api.POST('/automations/{id}/resume', { params: id(value), ...init(call) })),
    runs: (value, query, call) =>
      dataOf(
        api.GET('/automations/{id}/runs', {
          params: { ...id(value), ...(query ? { query } : {}) },
          ...init(call),
        }),
      ),
    stats: (value, call) => dataOf(api.GET('/automations/{id}/stats', { params: id(value), ...init(call) })),
  };
}
