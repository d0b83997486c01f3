import {
  batchRequestSchema,
  broadcastRequestSchema,
  ERROR_CODES,
  type ErrorCodeInfo,
  type MailingStatus,
  REQUEST_BODY_LIMITS,
  sendBatchRequestSchema,
  sendRequestSchema,
} from '@mailroom/core';
import { audiencePaths, audienceSchemas } from './openapi-audience.js';
import { automationPaths, automationRequestSchemas, automationSchemas } from './openapi-automations.js';
import { domainPaths, domainSchemas } from './openapi-domains.js';
import { eventPaths, eventSchemas } from './openapi-events.js';
import { formPaths, formSchemas } from './openapi-forms.js';
import { keyPaths, keySchemas } from './openapi-keys.js';
import { pausePaths, pauseSchemas } from './openapi-pauses.js';
import { receivingPaths, receivingSchemas } from './openapi-receiving.js';
import { resourcePaths, resourceRequestSchemas, resourceSchemas } from './openapi-resources.js';
import { preferencePaths, topicPaths, topicSchemas } from './openapi-topics.js';

/** A JSON object of the generated document. */
type JsonObject = { [key: string]: unknown };

/** What this module needs of a zod 4 schema. */
interface JsonSchemaSource {
  toJSONSchema(params: { target: 'draft-2020-12'; io: 'input'; unrepresentable: 'any' }): object;
}

const MAILING_STATUSES = [
  'queued',
  'scheduled',
  'sending',
  'completed',
  'cancelled',
  'failed',
] as const satisfies readonly MailingStatus[];

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });

/**
 * The OpenAPI 3.1 document of the routes, for a mount point `base`. Request bodies are generated from the
 * engine's own zod schemas (the input side: what clients send, before normalization), and error responses
 * from ERROR_CODES, so neither can drift from what the server does.
 */
export function buildOpenApiDocument(base: string): JsonObject {
  const schemas: JsonObject = {};
  addSchema(schemas, 'SendRequest', sendRequestSchema);
  addSchema(schemas, 'SendBatchRequest', sendBatchRequestSchema);
  addSchema(schemas, 'BroadcastRequest', broadcastRequestSchema);
  addSchema(schemas, 'BatchRequest', batchRequestSchema);
  for (const [name, schema] of Object.entries(resourceRequestSchemas())) addSchema(schemas, name, schema);
  for (const [name, schema] of Object.entries(automationRequestSchemas())) addSchema(schemas, name, schema);
  Object.assign(
    schemas,
    envelopeSchemas(),
    eventSchemas(),
    domainSchemas(),
    keySchemas(),
    resourceSchemas(),
    audienceSchemas(),
    pauseSchemas(),
    topicSchemas(),
    automationSchemas(),
    formSchemas(),
    receivingSchemas(),
  );

  const broadcastOperation = (operationId: string, deprecated: boolean): JsonObject => ({
    operationId,
    summary: deprecated
      ? 'Alias of /send/mail/broadcast (the TypeScript SDK spelling)'
      : 'Send an initial broadcast batch, or a later batch of an existing broadcast',
    description:
      'Without `broadcastRef` the body creates a broadcast (its initial batch). With `broadcastRef` it adds a ' +
      'batch to that broadcast; subject, sender and content come from the broadcast and cannot change.',
    ...(deprecated ? { deprecated: true } : {}),
    tags: ['broadcast'],
    parameters: [
      { $ref: '#/components/parameters/RequestId' },
      { $ref: '#/components/parameters/IdempotencyKey' },
    ],
    requestBody: {
      required: true,
      description: SEND_BODY_LIMIT,
      content: { 'application/json': { schema: { anyOf: [ref('BroadcastRequest'), ref('BatchRequest')] } } },
    },
    responses: responses('BroadcastResponse', 'Broadcast or batch accepted'),
  });

  return {
    openapi: '3.1.0',
    info: {
      title: 'Mailroom',
      version: '1.0.0',
      description:
        'Send single messages and broadcasts on behalf of a project. Every call authenticates with ' +
        '`Authorization: Bearer <project secret>` and sends `Content-Type: application/json`.',
    },
    servers: [{ url: base === '' ? '/' : base }],
    security: [{ bearerAuth: [] }],
    paths: {
      ...eventPaths(responses),
      ...domainPaths(responses),
      ...keyPaths(responses),
      ...resourcePaths(responses),
      ...audiencePaths(responses),
      ...pausePaths(responses),
      ...topicPaths(responses),
      ...formPaths(responses),
      ...preferencePaths(),
      ...automationPaths(responses),
      ...receivingPaths(responses),
      '/send/mail': {
        post: {
          operationId: 'sendMail',
          summary: 'Send one message to at most 10 recipients',
          tags: ['message'],
          parameters: [
            { $ref: '#/components/parameters/RequestId' },
            { $ref: '#/components/parameters/IdempotencyKey' },
          ],
          requestBody: {
            required: true,
            description: SEND_BODY_LIMIT,
            content: { 'application/json': { schema: ref('SendRequest') } },
          },
          responses: responses('SendResponse', 'Message accepted'),
        },
      },
      '/send/mail/batch': {
        post: {
          operationId: 'sendMailBatch',
          summary: 'Send up to 100 distinct messages in one call',
          description:
            'Each item is the body of POST /send/mail (at most 10 recipients, message or template, ' +
            'attachments) plus `options.scheduleFor`, `headers`, `tags` and its own `idempotencyKey`. ' +
            '`mode: strict` (the default) refuses the whole batch with 400 VALIDATION_FAILED if one item is ' +
            'bad, with an issue per problem whose path starts `items[i]`; `mode: partial` sends the good ' +
            'items and answers each bad one by index in `data.items[i].error`. A bare array of items is ' +
            'taken as `{ items, mode: strict }`. The Idempotency-Key header guards the whole batch.',
          tags: ['message'],
          parameters: [
            { $ref: '#/components/parameters/RequestId' },
            { $ref: '#/components/parameters/IdempotencyKey' },
          ],
          requestBody: {
            required: true,
            description: SEND_BODY_LIMIT,
            content: { 'application/json': { schema: ref('SendBatchRequest') } },
          },
          responses: responses('SendBatchResponse', 'Batch accepted (in partial mode, maybe in part)'),
        },
      },
      '/send/mail/broadcast': { post: broadcastOperation('sendBroadcast', false) },
      '/send/mail/broadast': { post: broadcastOperation('sendBroadcastAlias', true) },
      '/send/mail/broadcast/{ref}/cancel': {
        post: {
          operationId: 'cancelBroadcast',
          summary: 'Cancel a scheduled or running broadcast: it sends nothing more and takes no batch',
          tags: ['broadcast'],
          parameters: [refParameter, { $ref: '#/components/parameters/RequestId' }],
          responses: responses('BroadcastResponse', 'Broadcast cancelled'),
        },
      },
      '/send/mail/broadcast/{ref}/reschedule': {
        post: {
          operationId: 'rescheduleBroadcast',
          summary: 'Move a scheduled broadcast to another time',
          tags: ['broadcast'],
          parameters: [refParameter, { $ref: '#/components/parameters/RequestId' }],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['scheduleFor'],
                  properties: {
                    scheduleFor: {
                      type: 'string',
                      format: 'date-time',
                      description: 'ISO-8601 with `Z` or an offset, for example `2025-12-25T10:00:00.000Z`.',
                    },
                  },
                },
              },
            },
          },
          responses: responses('BroadcastResponse', 'Broadcast rescheduled'),
        },
      },
      '/unsubscribe/{token}': {
        get: {
          operationId: 'unsubscribePage',
          summary: 'A confirmation page with a button; never changes anything',
          tags: ['unsubscribe'],
          security: [],
          parameters: [tokenParameter],
          responses: {
            '200': { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
            '404': { description: 'Unknown or forged token' },
          },
        },
        post: {
          operationId: 'unsubscribeOneClick',
          summary: 'RFC 8058 one-click unsubscribe (any body, no cookies, no auth); idempotent',
          tags: ['unsubscribe'],
          security: [],
          parameters: [tokenParameter],
          responses: {
            '200': {
              description: 'Unsubscribed (HTML page)',
              content: { 'text/html': { schema: { type: 'string' } } },
            },
            '404': { description: 'Unknown or forged token' },
          },
        },
      },
      '/t/c/{token}': {
        get: {
          operationId: 'trackClick',
          summary: 'A tracked link (when the engine tracks clicks): 302 to the URL the mailing holds for it',
          description:
            'No auth. The destination comes from the mailing (never from the request): a forged, altered or unknown token, a token of another project and a link index out of range are 404 and record nothing. The click is recorded behind the answer. See docs/tracking.md.',
          tags: ['tracking'],
          security: [],
          parameters: [tokenParameter],
          responses: {
            '302': { description: 'To the original URL (`Location`), with `Referrer-Policy: no-referrer`' },
            '404': { description: 'Unknown or forged token' },
          },
        },
      },
      '/t/o/{token}.gif': {
        get: {
          operationId: 'trackOpen',
          summary: 'The open pixel (when the engine tracks opens): a 1x1 GIF, `Cache-Control: no-store`',
          tags: ['tracking'],
          security: [],
          parameters: [tokenParameter],
          responses: {
            '200': {
              description: 'The GIF',
              content: { 'image/gif': { schema: { type: 'string', format: 'binary' } } },
            },
            '404': { description: 'Unknown or forged token' },
          },
        },
      },
      '/inbound/ses': inboundOperation(
        'inboundSes',
        'Amazon SES bounce, complaint and delivery notifications delivered by SNS (SNS signature checked; SubscriptionConfirmation confirmed)',
      ),
      '/inbound/mailgun': inboundOperation(
        'inboundMailgun',
        'Mailgun webhooks (failed, complained, delivered), signed with the webhook signing key',
      ),
    },
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'The project secret (`sk_live_...`, `sk_sandbox_...`).',
        },
      },
      parameters: {
        RequestId: {
          name: 'X-Request-ID',
          in: 'header',
          required: false,
          description:
            'Echoed back when it is at most 128 characters of [A-Za-z0-9._-]; otherwise one is generated.',
          schema: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' },
        },
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Makes the call safe to retry: kept 24 hours per project. A repeat with the same key and body answers ' +
            'the first response (with `Idempotent-Replayed: true`) and sends nothing again; the same key with ' +
            'another body, or while the first call runs, is 409 `IDEMPOTENCY_CONFLICT`. A refused call does not ' +
            'use up its key.',
          schema: { type: 'string', minLength: 1, maxLength: 256 },
        },
      },
      headers: {
        RequestId: {
          description: 'The id of this request, for support and logs.',
          schema: { type: 'string' },
        },
        RetryAfter: {
          description:
            'Seconds to wait before retrying: on 429, until the rate allows; on 503 (a store outage: `STORE_UNAVAILABLE`, `STORAGE_FULL`), 5 unless the error says otherwise.',
          schema: { type: 'integer', minimum: 1 },
        },
      },
    },
    'x-error-codes': ERROR_CODES,
  };
}

/** A provider notification endpoint: no project secret, the provider's signature instead. */
function inboundOperation(operationId: string, summary: string): JsonObject {
  return {
    post: {
      operationId,
      summary,
      tags: ['inbound'],
      security: [],
      requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
      responses: {
        '200': {
          description: 'Taken: `outcome` is `applied`, `duplicate` or `ignored` (with a `reason`)',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  outcome: { type: 'string', enum: ['applied', 'duplicate', 'ignored'] },
                  reason: { type: 'string' },
                },
              },
            },
          },
        },
        '401': { description: 'Unsigned or wrongly signed: nothing changed' },
        '404': { description: 'This provider is not configured' },
        '503': { description: 'The delivery named has no recorded send outcome yet: retry later' },
      },
    },
  };
}

const refParameter: JsonObject = {
  name: 'ref',
  in: 'path',
  required: true,
  description: 'The broadcast reference.',
  schema: { type: 'string' },
};

const tokenParameter: JsonObject = {
  name: 'token',
  in: 'path',
  required: true,
  description: 'The token of a `List-Unsubscribe` link.',
  schema: { type: 'string' },
};

/** What the send endpoints' bodies may weigh (core's `REQUEST_BODY_LIMITS`); the field caps are in the schemas. */
const SEND_BODY_LIMIT =
  `At most the handler's bodyLimit (${REQUEST_BODY_LIMITS.send} bytes by default; every other route ` +
  `${REQUEST_BODY_LIMITS.other}), else 413 PAYLOAD_TOO_LARGE before parsing. Every field is capped ` +
  '(maxLength, maxItems, maxProperties here; variables also by their JSON size): over a cap is 400 ' +
  'VALIDATION_FAILED with the field path in issues.';

/** The responses of an operation: 200, then one entry per status of the ERROR_CODES table. */
function responses(successSchema: string, successDescription: string): JsonObject {
  const out: JsonObject = {
    '200': {
      description: successDescription,
      headers: { 'X-Request-ID': { $ref: '#/components/headers/RequestId' } },
      content: { 'application/json': { schema: ref(successSchema) } },
    },
  };
  const byStatus = new Map<number, string[]>();
  for (const [code, info] of Object.entries(ERROR_CODES) as Array<[string, ErrorCodeInfo]>) {
    const lines = byStatus.get(info.status) ?? [];
    lines.push(`\`${code}\`: ${info.description}`);
    byStatus.set(info.status, lines);
  }
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const headers: JsonObject = { 'X-Request-ID': { $ref: '#/components/headers/RequestId' } };
    // Every 503 says when to come back (the error's own time, else DEFAULT_RETRY_AFTER_SECONDS).
    if (status === 429 || status === 503)
      headers['Retry-After'] = { $ref: '#/components/headers/RetryAfter' };
    out[String(status)] = {
      description: (byStatus.get(status) ?? []).join('\n\n'),
      headers,
      content: { 'application/json': { schema: ref('ErrorResponse') } },
    };
  }
  return out;
}

/** The response envelopes, which the HTTP layer itself defines. */
function envelopeSchemas(): JsonObject {
  const success = (data: JsonObject): JsonObject => ({
    type: 'object',
    required: ['message', 'statusCode', 'data'],
    properties: { message: { type: 'string' }, statusCode: { const: 200 }, data },
  });
  const status = { type: 'string', enum: MAILING_STATUSES };
  return {
    SendResponse: success({
      type: 'object',
      required: ['ref'],
      properties: { ref: { type: 'string', description: 'Reference of the message.' }, status },
    }),
    SendBatchResponse: success({
      type: 'object',
      required: ['mode', 'accepted', 'refused', 'items'],
      properties: {
        mode: { type: 'string', enum: ['strict', 'partial'] },
        accepted: { type: 'integer', description: 'Items accepted (sent, scheduled or replayed).' },
        refused: { type: 'integer', description: 'Items refused (partial mode only).' },
        items: {
          type: 'array',
          description: 'One answer per item, in the order of `items`.',
          items: {
            type: 'object',
            required: ['index'],
            properties: {
              index: { type: 'integer', description: 'Position of the item in `items`, from 0.' },
              ref: { type: 'string', description: 'Reference of the message (an accepted item).' },
              status,
              replayed: {
                type: 'boolean',
                description: "True when the item's own idempotency key answered an earlier result.",
              },
              error: {
                type: 'object',
                description: 'Why the item was refused (partial mode).',
                required: ['code', 'message', 'issues'],
                properties: {
                  code: ref('ErrorCode'),
                  message: { type: 'string' },
                  issues: {
                    type: 'array',
                    items: {
                      type: 'object',
                      required: ['code', 'path', 'message'],
                      properties: {
                        code: { type: 'string' },
                        path: { type: 'array', items: { type: ['string', 'integer'] } },
                        message: { type: 'string' },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    }),
    BroadcastResponse: success({
      type: 'object',
      required: ['broadcast', 'broadcastRef'],
      properties: {
        broadcast: {
          type: 'object',
          required: ['ref', 'status'],
          properties: { ref: { type: 'string' }, status },
        },
        broadcastRef: {
          type: 'string',
          description: 'The same ref as `broadcast.ref`; later batches name it.',
        },
        batch: {
          type: 'object',
          description: 'The batch just committed.',
          properties: {
            seq: { type: 'integer', description: '1 for the initial batch, then 2, 3, ...' },
            recipients: { type: 'integer', description: 'Recipients given inline, duplicates collapsed.' },
            inserted: {
              type: 'integer',
              description: 'Deliveries created (recipients already in the broadcast are not).',
            },
          },
        },
      },
    }),
    ErrorCode: {
      type: 'string',
      enum: Object.keys(ERROR_CODES),
      description: 'Machine-readable error code; `x-error-codes` gives the status and meaning of each.',
    },
    ErrorResponse: {
      type: 'object',
      required: ['message', 'statusCode', 'code'],
      properties: {
        message: { type: 'string' },
        statusCode: { type: 'integer' },
        code: ref('ErrorCode'),
        error: {
          type: 'string',
          description: 'The same text as `message` (read by the Dart and Go clients).',
        },
        detail: { type: 'string', description: 'The same text as `message` (read by the Go client).' },
        issues: {
          type: 'array',
          description: 'Validation issues (`VALIDATION_FAILED`), as zod reports them.',
          items: {
            type: 'object',
            required: ['code', 'path', 'message'],
            properties: {
              code: { type: 'string' },
              path: { type: 'array', items: { type: ['string', 'integer'] } },
              message: { type: 'string' },
            },
          },
        },
      },
    },
  };
}

/**
 * Adds a zod schema's JSON Schema under `name`. Nested `$defs` (recursive or registered schemas) move to
 * `components/schemas` as `<name>_<def>`, since `#/$defs/...` would resolve against the OpenAPI document.
 */
function addSchema(schemas: JsonObject, name: string, source: JsonSchemaSource): void {
  const generated = JSON.parse(
    JSON.stringify(source.toJSONSchema({ target: 'draft-2020-12', io: 'input', unrepresentable: 'any' })),
  ) as JsonObject;
  const { $schema: _dialect, $defs, ...root } = generated;
  const defs = isObject($defs) ? $defs : {};
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (!isObject(value)) return value;
    const out: JsonObject = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = key === '$ref' && typeof item === 'string' ? rewriteRef(name, item) : rewrite(item);
    }
    return out;
  };
  schemas[name] = rewrite(root);
  for (const [defName, def] of Object.entries(defs)) schemas[`${name}_${defName}`] = rewrite(def);
}

function rewriteRef(name: string, target: string): string {
  if (target === '#') return `#/components/schemas/${name}`;
  if (target.startsWith('#/$defs/')) return `#/components/schemas/${name}_${target.slice('#/$defs/'.length)}`;
  return target;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
