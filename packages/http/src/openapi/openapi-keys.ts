/** A JSON object of the generated document. */
type JsonObject = { [key: string]: unknown };

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const dateTime = { type: 'string', format: 'date-time' };
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' };
const SCOPES = ['full', 'sending', 'read'];

/** The JSON Schemas of API keys: a key (never its secret), and the answers that show a secret once. */
export function keySchemas(): JsonObject {
  const success = (data: JsonObject): JsonObject => ({
    type: 'object',
    required: ['message', 'statusCode', 'data'],
    properties: { message: { type: 'string' }, statusCode: { const: 200 }, data },
  });
  return {
    ApiKey: {
      type: 'object',
      description: 'A project key as listed: never its secret.',
      required: ['id', 'prefix', 'name', 'mode', 'scope', 'domains', 'state', 'createdAt'],
      properties: {
        id: { type: 'string', description: '`key_…`: what revoke and rotate name the key by.' },
        prefix: { type: 'string', description: "The secret's first characters (`sk_live_AbCd`)." },
        name: {
          type: ['string', 'null'],
          description: 'What the key is for (`CI`, `marketing site`); null when it was made without a name.',
        },
        mode: { enum: ['live', 'sandbox'] },
        scope: {
          enum: SCOPES,
          description:
            '`full`: every route; `sending`: the send endpoints only (`/send/mail`, `/send/mail/broadcast` and its batches); `read`: reads (GET) of the management routes.',
        },
        domains: {
          type: 'array',
          items: { type: 'string' },
          description: 'Sender domains the key may send from; empty: any sender of the project.',
        },
        state: {
          enum: ['active', 'expiring', 'expired', 'revoked'],
          description: '`expiring`: rotated, working until `expiresAt`.',
        },
        createdAt: dateTime,
        lastUsedAt: { ...nullableDateTime, description: 'Noted at most once a minute.' },
        revokedAt: nullableDateTime,
        expiresAt: nullableDateTime,
        replacedBy: { type: ['string', 'null'] },
      },
    },
    ApiKeyCreateRequest: {
      type: 'object',
      additionalProperties: false,
      required: ['scope'],
      properties: {
        scope: { enum: SCOPES },
        domains: {
          type: 'array',
          items: { type: 'string' },
          description: 'Limit the key to senders of these domains (`example.com`).',
        },
        mode: { enum: ['live', 'sandbox'], default: 'live' },
        name: {
          type: 'string',
          minLength: 1,
          maxLength: 100,
          description:
            'What the key is for (`CI`, `marketing site`), shown in lists and the dashboard; one line. A rotation passes it on.',
        },
      },
    },
    ApiKeyRotateRequest: {
      type: 'object',
      additionalProperties: false,
      properties: {
        graceSeconds: {
          type: 'integer',
          minimum: 0,
          maximum: 2_592_000,
          default: 0,
          description: 'Seconds the old key keeps working; then it answers 401.',
        },
      },
    },
    ApiKeysResponse: success({
      type: 'object',
      required: ['keys', 'nextCursor'],
      properties: {
        keys: { type: 'array', items: ref('ApiKey') },
        nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page.' },
      },
    }),
    ApiKeyCreatedResponse: success({
      type: 'object',
      required: ['key', 'secret'],
      properties: {
        key: ref('ApiKey'),
        secret: { type: 'string', description: 'Shown in this answer only: store it now.' },
      },
    }),
    ApiKeyRotatedResponse: success({
      type: 'object',
      required: ['key', 'secret', 'previous'],
      properties: {
        key: ref('ApiKey'),
        secret: { type: 'string', description: "The new key's secret, shown in this answer only." },
        previous: ref('ApiKey'),
      },
    }),
    ApiKeyResponse: success({ type: 'object', required: ['key'], properties: { key: ref('ApiKey') } }),
  };
}

/** The paths of API keys; `responses` builds the answers (success schema and errors). */
export function keyPaths(responses: (schema: string, description: string) => JsonObject): JsonObject {
  const requestId = { $ref: '#/components/parameters/RequestId' };
  const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
  const json = (schema: string, required: boolean): JsonObject => ({
    required,
    content: { 'application/json': { schema: ref(schema) } },
  });
  return {
    '/keys': {
      get: {
        operationId: 'listKeys',
        summary:
          "The project's keys (name, prefix, scope, domains, created, last used), oldest first; needs `read`",
        tags: ['keys'],
        parameters: [
          requestId,
          { name: 'cursor', in: 'query', schema: { type: 'string' } },
          {
            name: 'limit',
            in: 'query',
            schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
          },
        ],
        responses: responses('ApiKeysResponse', 'Keys'),
      },
      post: {
        operationId: 'createKey',
        summary:
          'Make a key with a scope and a name, optionally limited to sender domains; its secret is shown once; needs `full`',
        tags: ['keys'],
        parameters: [requestId],
        requestBody: json('ApiKeyCreateRequest', true),
        responses: responses('ApiKeyCreatedResponse', 'Key created'),
      },
    },
    '/keys/{id}': {
      delete: {
        operationId: 'revokeKey',
        summary: 'Revoke a key: from now on it answers 401; needs `full`',
        tags: ['keys'],
        parameters: [idParameter, requestId],
        responses: responses('ApiKeyResponse', 'Key revoked'),
      },
    },
    '/keys/{id}/rotate': {
      post: {
        operationId: 'rotateKey',
        summary:
          'Replace a key by a new one of the same scope and domains; the old one works for `graceSeconds`; needs `full`',
        tags: ['keys'],
        parameters: [idParameter, requestId],
        requestBody: json('ApiKeyRotateRequest', false),
        responses: responses('ApiKeyRotatedResponse', 'Key rotated'),
      },
    },
  };
}
