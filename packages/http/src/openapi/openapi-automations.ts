import { trackRequestSchema, workflowSchema } from '@mailroom/core';

/** A JSON object of the generated document. */
type JsonObject = { [key: string]: unknown };

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const dateTime = { type: 'string', format: 'date-time' };
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' };
const nullableString = { type: ['string', 'null'] };

/** The request bodies of automations, as zod schemas (the document takes their JSON Schemas). */
export function automationRequestSchemas() {
  return { TrackRequest: trackRequestSchema, WorkflowDefinition: workflowSchema };
}

/** The JSON Schemas of automations' answers (issue 39). */
export function automationSchemas(): JsonObject {
  const success = (data: JsonObject): JsonObject => ({
    type: 'object',
    required: ['message', 'statusCode', 'data'],
    properties: { message: { type: 'string' }, statusCode: { const: 200 }, data },
  });
  const object = (required: string[], properties: JsonObject): JsonObject => ({
    type: 'object',
    required,
    properties,
  });
  const counts = { type: 'integer', minimum: 0 };
  return {
    TrackResult: object(['id', 'recorded', 'started'], {
      id: { type: 'string', description: "The event's id: the one given, or `evt_…`." },
      recorded: { type: 'boolean', description: 'False when an event with this id was already tracked.' },
      started: {
        type: 'array',
        items: object(['run', 'workflow'], { run: { type: 'string' }, workflow: { type: 'string' } }),
      },
    }),
    RunCounts: object(['atStep', 'active', 'completed', 'exited'], {
      atStep: {
        type: 'object',
        additionalProperties: counts,
        description: 'Active runs at each step id.',
      },
      active: counts,
      completed: counts,
      exited: counts,
    }),
    Workflow: object(
      ['id', 'name', 'status', 'version', 'trigger', 'definition', 'runs', 'createdAt', 'updatedAt'],
      {
        id: { type: 'string' },
        name: { type: 'string' },
        status: { enum: ['active', 'paused'] },
        version: { type: 'integer', description: 'The current version; runs keep the one they started on.' },
        trigger: { type: 'string' },
        definition: ref('WorkflowDefinition'),
        runs: ref('RunCounts'),
        createdAt: dateTime,
        updatedAt: dateTime,
      },
    ),
    Run: object(
      [
        'id',
        'workflow',
        'version',
        'contact',
        'status',
        'step',
        'dueAt',
        'triggerEventId',
        'endReason',
        'startedAt',
        'endedAt',
      ],
      {
        id: { type: 'string' },
        workflow: { type: 'string' },
        version: { type: 'integer' },
        contact: { type: 'string' },
        status: { enum: ['active', 'completed', 'exited'] },
        step: nullableString,
        dueAt: nullableDateTime,
        triggerEventId: { type: 'string' },
        endReason: {
          ...nullableString,
          description: '`completed`, `exit-step`, `exit-event:<name>`, `workflow-deleted`, `failed: …`.',
        },
        startedAt: dateTime,
        endedAt: nullableDateTime,
      },
    ),
    StepStats: object(['id', 'type', 'entered', 'waiting', 'passed', 'exited'], {
      id: { type: 'string', description: "The step's id." },
      type: {
        ...nullableString,
        description: 'Its type in the current version; null for a step only an earlier version has.',
      },
      entered: {
        ...counts,
        description: 'Runs that arrived at it (a run’s start counts at its first step).',
      },
      waiting: { ...counts, description: 'Runs at it now.' },
      passed: { ...counts, description: 'Runs that moved on from it (to the next step, or completed).' },
      exited: {
        ...counts,
        description:
          'Runs that ended at it: an exit step or event, a failure, the workflow deleted, the contact erased.',
      },
    }),
    WorkflowStats: object(['workflow', 'version', 'steps'], {
      workflow: { type: 'string' },
      version: { type: 'integer', description: 'The current version.' },
      steps: {
        type: 'array',
        items: ref('StepStats'),
        description:
          'The current version’s steps in order, then steps of earlier versions that runs reached.',
      },
    }),
    TrackResponse: success(ref('TrackResult')),
    WorkflowsResponse: success(
      object(['workflows'], { workflows: { type: 'array', items: ref('Workflow') } }),
    ),
    WorkflowResponse: success(object(['workflow'], { workflow: ref('Workflow') })),
    WorkflowStatsResponse: success(object(['stats'], { stats: ref('WorkflowStats') })),
    WorkflowDeletedResponse: success(object(['workflow'], { workflow: { type: 'string' } })),
    RunsResponse: success(
      object(['runs', 'nextCursor'], {
        runs: { type: 'array', items: ref('Run') },
        nextCursor: {
          ...nullableString,
          description: 'Pass as `cursor` for the next page; null on the last.',
        },
      }),
    ),
  };
}

/** The paths of automations; `responses` builds the answers (success schema and errors). */
export function automationPaths(responses: (schema: string, description: string) => JsonObject): JsonObject {
  const requestId = { $ref: '#/components/parameters/RequestId' };
  const id = {
    name: 'id',
    in: 'path',
    required: true,
    description: "The workflow's id.",
    schema: { type: 'string' },
  };
  const body = (schema: string): JsonObject => ({
    required: true,
    content: { 'application/json': { schema: ref(schema) } },
  });
  const tags = ['automations'];
  const action = (operationId: string, summary: string): JsonObject => ({
    post: {
      operationId,
      summary,
      tags,
      parameters: [id, requestId],
      responses: responses('WorkflowResponse', summary),
    },
  });
  return {
    '/events/track': {
      post: {
        operationId: 'trackEvent',
        summary:
          'Track an event of a contact: starts the runs of the workflows it triggers, wakes runs waiting for it, ends the runs it exits; an `id` makes a repeat a no-op; needs `sending`',
        tags,
        parameters: [requestId],
        requestBody: body('TrackRequest'),
        responses: responses('TrackResponse', 'Event tracked'),
      },
    },
    '/automations': {
      get: {
        operationId: 'listWorkflows',
        summary: "The project's workflows with their run counts; needs `read`",
        tags,
        parameters: [requestId],
        responses: responses('WorkflowsResponse', 'Workflows'),
      },
      post: {
        operationId: 'createWorkflow',
        summary:
          'Create a workflow from its definition (a bad one is 400 with issues naming its path); needs `full`',
        tags,
        parameters: [requestId],
        requestBody: body('WorkflowDefinition'),
        responses: responses('WorkflowResponse', 'Workflow created'),
      },
    },
    '/automations/{id}': {
      get: {
        operationId: 'getWorkflow',
        summary: 'One workflow with its runs per step; needs `read`',
        tags,
        parameters: [id, requestId],
        responses: responses('WorkflowResponse', 'Workflow'),
      },
      put: {
        operationId: 'updateWorkflow',
        summary: 'Write the next version (running runs stay on theirs); needs `full`',
        tags,
        parameters: [id, requestId],
        requestBody: body('WorkflowDefinition'),
        responses: responses('WorkflowResponse', 'Workflow updated'),
      },
      delete: {
        operationId: 'deleteWorkflow',
        summary: 'Delete a workflow: its runs end; needs `full`',
        tags,
        parameters: [id, requestId],
        responses: responses('WorkflowDeletedResponse', 'Workflow deleted'),
      },
    },
    '/automations/{id}/pause': action(
      'pauseWorkflow',
      'Pause a workflow: no run starts, due steps wait; needs `full`',
    ),
    '/automations/{id}/resume': action('resumeWorkflow', 'Resume a paused workflow; needs `full`'),
    '/automations/{id}/runs': {
      get: {
        operationId: 'listWorkflowRuns',
        summary: "A workflow's runs, newest first (`?status=&cursor=&limit=`); needs `read`",
        tags,
        parameters: [
          id,
          requestId,
          { name: 'status', in: 'query', schema: { enum: ['active', 'completed', 'exited'] } },
          { name: 'cursor', in: 'query', schema: { type: 'string' } },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
        ],
        responses: responses('RunsResponse', 'Runs'),
      },
    },
    '/automations/{id}/stats': {
      get: {
        operationId: 'getWorkflowStats',
        summary:
          "A workflow's runs per step: entered, waiting, passed and exited, read from counters (no run is read); needs `read`",
        tags,
        parameters: [id, requestId],
        responses: responses('WorkflowStatsResponse', 'Runs per step'),
      },
    },
  };
}
