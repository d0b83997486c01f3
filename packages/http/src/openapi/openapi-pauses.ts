import { MAX_PAUSE_MINUTES, MAX_PAUSE_REASON } from '@mailroom/core';

/** A JSON object of the generated document. */
type JsonObject = { [key: string]: unknown };

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const reason = {
  type: 'string',
  maxLength: MAX_PAUSE_REASON,
  description: 'Why, in words: shown with the pause (API, CLI, dashboard) and in its event.',
};

/** The JSON Schemas of pauses: a pause in force, its guard rule, the bodies of a pause, the answer. */
export function pauseSchemas(): JsonObject {
  return {
    PauseRule: {
      type: 'object',
      description: "The reputation guard's rule that paused, with the figures it saw.",
      required: ['name', 'signal', 'count', 'attempts', 'rate', 'threshold', 'minimum', 'windowMs', 'since'],
      properties: {
        name: {
          type: 'string',
          description: 'For example `broadcast.hard-bounces`, `destination.sender-side`.',
        },
        signal: { type: 'string', description: '`hard-bounce`, `complaint` or `sender-side`.' },
        count: { type: 'integer' },
        attempts: { type: 'integer' },
        rate: { type: 'number', description: '`count / attempts`.' },
        threshold: { type: 'number', description: 'A rate above it pauses.' },
        minimum: { type: 'integer', description: 'Fewer never pause.' },
        windowMs: { type: ['integer', 'null'], description: 'null: the broadcast’s whole life.' },
        since: { type: ['string', 'null'], format: 'date-time' },
      },
    },
    Pause: {
      type: 'object',
      description: 'A pause in force: what no worker claims until it is resumed (or its `until` passes).',
      required: ['scope', 'target', 'domains', 'by', 'reason', 'rule', 'createdAt', 'until'],
      properties: {
        scope: { enum: ['broadcast', 'project', 'destination'] },
        target: {
          type: 'string',
          description: "The broadcast's ref, the project's id (`project`), or the destination's name.",
        },
        domains: {
          type: 'array',
          items: { type: 'string' },
          description: '`destination`: the recipient domains held back; empty otherwise.',
        },
        by: {
          enum: ['operator', 'guard'],
          description: 'An operator (API, CLI, dashboard) or the reputation guard.',
        },
        reason: { type: ['string', 'null'] },
        rule: { anyOf: [ref('PauseRule'), { type: 'null' }] },
        createdAt: { type: 'string', format: 'date-time' },
        until: {
          type: ['string', 'null'],
          format: 'date-time',
          description: 'When a timed pause ends by itself; null: until resumed.',
        },
      },
    },
    PauseRequest: {
      type: 'object',
      additionalProperties: false,
      description: 'Optional: the body may be empty.',
      properties: { reason },
    },
    DestinationPauseRequest: {
      type: 'object',
      additionalProperties: false,
      description:
        'Optional: the body may be empty (the destination is the one recipient domain of its name).',
      properties: {
        reason,
        minutes: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_PAUSE_MINUTES,
          description: 'Resume by itself after this many minutes; absent: until resumed.',
        },
        domains: {
          type: 'array',
          minItems: 1,
          items: { type: 'string' },
          description: 'The recipient domains this destination covers (a group name such as `microsoft`).',
        },
      },
    },
    PausesResponse: {
      type: 'object',
      required: ['message', 'statusCode', 'data'],
      properties: {
        message: { type: 'string' },
        statusCode: { const: 200 },
        data: {
          type: 'object',
          required: ['pauses'],
          properties: {
            pauses: {
              type: 'array',
              items: ref('Pause'),
              description: "The project's pauses in force after the call, oldest first.",
            },
          },
        },
      },
    },
  };
}

/** The paths of pause and resume; `responses` builds the answers (success schema and errors). */
export function pausePaths(responses: (schema: string, description: string) => JsonObject): JsonObject {
  const requestId = { $ref: '#/components/parameters/RequestId' };
  const param = (name: string, description: string): JsonObject => ({
    name,
    in: 'path',
    required: true,
    description,
    schema: { type: 'string' },
  });
  const refParam = param('ref', "The broadcast's ref (`bc_…`).");
  const nameParam = param('name', 'A recipient domain (`gmail.com`) or a group name with `domains`.');
  const body = (schema: string): JsonObject => ({
    required: false,
    content: { 'application/json': { schema: ref(schema) } },
  });
  const post = (
    operationId: string,
    summary: string,
    parameters: JsonObject[],
    schema?: string,
  ): JsonObject => ({
    post: {
      operationId,
      summary,
      tags: ['pauses'],
      parameters: [...parameters, requestId],
      ...(schema ? { requestBody: body(schema) } : {}),
      responses: responses('PausesResponse', 'The pauses in force after the call'),
    },
  });
  return {
    '/pauses': {
      get: {
        operationId: 'listPauses',
        summary:
          "The project's pauses in force (broadcasts, its sending, destinations), with who paused and why; needs `read`",
        tags: ['pauses'],
        parameters: [requestId],
        responses: responses('PausesResponse', 'Pauses'),
      },
    },
    '/broadcasts/{ref}/pause': post(
      'pauseBroadcast',
      'Pause a broadcast: deliveries in flight finish, no other is sent until resumed; a cancelled or failed one is 409 `BROADCAST_CLOSED`; needs `full`',
      [refParam],
      'PauseRequest',
    ),
    '/broadcasts/{ref}/resume': post(
      'resumeBroadcast',
      'Resume a paused broadcast where it stopped (none sent twice); not paused: nothing changes; needs `full`',
      [refParam],
    ),
    '/sending/pause': post(
      'pauseSending',
      "Pause the project's whole sending (every mailing); needs `full`",
      [],
      'PauseRequest',
    ),
    '/sending/resume': post('resumeSending', "Resume the project's sending; needs `full`", []),
    '/destinations/{name}/pause': post(
      'pauseDestination',
      'Pause the deliveries to a destination (a recipient domain, or a group of domains), optionally for some minutes; needs `full`',
      [nameParam],
      'DestinationPauseRequest',
    ),
    '/destinations/{name}/resume': post(
      'resumeDestination',
      'Resume the deliveries to a destination; needs `full`',
      [nameParam],
    ),
  };
}
