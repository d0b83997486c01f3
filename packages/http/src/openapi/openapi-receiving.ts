/** A JSON object of the generated document. */
type JsonObject = { [key: string]: unknown };

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const dateTime = { type: 'string', format: 'date-time' };
const nullableString = { type: ['string', 'null'] };
const address = {
  type: 'object',
  required: ['address', 'name'],
  properties: { address: { type: 'string' }, name: { type: 'string' } },
};
const destination = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'endpointId'],
      properties: { kind: { const: 'webhook' }, endpointId: { type: 'string' } },
      description: 'An `email.received` event POSTed to this webhook endpoint only (signed, retried).',
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind'],
      properties: { kind: { const: 'handler' } },
      description: 'The engine’s `onInbound` handler.',
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['kind'],
      properties: { kind: { const: 'store' } },
      description: 'Kept only, listed by `GET /inbound/messages`.',
    },
  ],
};

/** The JSON Schemas of receiving mail for the app (issue 40). */
export function receivingSchemas(): JsonObject {
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
  return {
    ReceivingRoute: object(['id', 'domain', 'pattern', 'destination', 'created_at'], {
      id: { type: 'string' },
      domain: { type: 'string' },
      pattern: { type: 'string' },
      destination,
      created_at: dateTime,
    }),
    ReceivingRouteCreate: {
      type: 'object',
      additionalProperties: false,
      required: ['domain', 'pattern', 'destination'],
      properties: {
        domain: { type: 'string', description: 'The receiving domain (its MX points at the listener).' },
        pattern: {
          type: 'string',
          description: 'A local part (`support`), a prefix with a wildcard (`reply+*`) or `*` (catch-all).',
        },
        destination,
      },
    },
    InboundMail: object(
      [
        'id',
        'project_id',
        'route_id',
        'received_at',
        'envelope',
        'from',
        'to',
        'subject',
        'text',
        'html',
        'stripped_text',
        'attachments',
        'auth',
        'replied_to',
      ],
      {
        id: { type: 'string' },
        project_id: { type: 'string' },
        route_id: { type: 'string' },
        received_at: dateTime,
        envelope: object(['from', 'to', 'remote_address'], {
          from: { type: 'string' },
          to: { type: 'array', items: { type: 'string' } },
          remote_address: { type: 'string' },
        }),
        from: { oneOf: [address, { type: 'null' }] },
        to: { type: 'array', items: address },
        cc: { type: 'array', items: address },
        reply_to: { type: 'array', items: address },
        subject: nullableString,
        date: nullableString,
        message_id: nullableString,
        in_reply_to: nullableString,
        references: { type: 'array', items: { type: 'string' } },
        text: nullableString,
        html: nullableString,
        stripped_text: { ...nullableString, description: 'The new text above the quoted original.' },
        headers: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
        attachments: {
          type: 'array',
          items: object(['filename', 'content_type', 'size', 'content_id', 'url', 'url_expires_at'], {
            filename: nullableString,
            content_type: { type: 'string' },
            size: { type: 'integer' },
            content_id: nullableString,
            url: {
              ...nullableString,
              description:
                'Signed, expiring download URL (`GET /inbound/attachments/{token}`, no key); null without `receiving.baseUrl`.',
            },
            url_expires_at: { ...nullableString, format: 'date-time' },
          }),
        },
        auth: object(['spf', 'dkim', 'dmarc', 'arc', 'header'], {
          spf: { type: 'string' },
          dkim: { type: 'string' },
          dmarc: { type: 'string' },
          arc: { type: 'string' },
          header: { type: 'string' },
        }),
        spam: { type: ['object', 'null'] },
        replied_to: {
          type: ['object', 'null'],
          description:
            'The delivery this message answers: `delivery_id`, `message_id`, `address`, `mailing` (`ref`, `kind`), `matched_by` (`reply_address` or `headers`).',
        },
      },
    ),
    ReceivingSettings: object(
      ['retention_days', 'max_message_bytes', 'reply_domain', 'defaults', 'updated_at'],
      {
        retention_days: {
          type: ['integer', 'null'],
          description: 'Days received mail (raw message, attachments) is kept; null: the default.',
        },
        max_message_bytes: {
          type: ['integer', 'null'],
          description: 'Largest message the project’s routes take (552 past it); null: the default.',
        },
        reply_domain: {
          ...nullableString,
          description: 'Per-delivery reply addresses `reply+<delivery id>@<reply_domain>`; null: off.',
        },
        defaults: object(['retention_days', 'max_message_bytes'], {
          retention_days: { type: ['integer', 'null'], description: 'null: kept.' },
          max_message_bytes: { type: 'integer' },
        }),
        updated_at: { ...nullableString, format: 'date-time' },
      },
    ),
    ReceivingSettingsUpdate: {
      type: 'object',
      additionalProperties: false,
      description: 'Absent fields are kept; null sets a field back to the default.',
      properties: {
        retention_days: { type: ['integer', 'null'], minimum: 1, maximum: 36500 },
        max_message_bytes: { type: ['integer', 'null'], minimum: 1024, maximum: 104857600 },
        reply_domain: {
          ...nullableString,
          description:
            'A domain on which a route of the project takes `reply+...@` (e.g. pattern `reply+*`).',
        },
      },
    },
    ReceivingRoutesResponse: success(
      object(['routes'], { routes: { type: 'array', items: ref('ReceivingRoute') } }),
    ),
    ReceivingRouteResponse: success(object(['route'], { route: ref('ReceivingRoute') })),
    ReceivingRouteDeletedResponse: success(object(['route'], { route: { type: 'string' } })),
    InboundMessagesResponse: success(
      object(['messages', 'nextCursor'], {
        messages: { type: 'array', items: ref('InboundMail') },
        nextCursor: {
          ...nullableString,
          description: 'Pass as `before` for the next page; null on the last.',
        },
      }),
    ),
    InboundMessageResponse: success(object(['message'], { message: ref('InboundMail') })),
    ReceivingSettingsResponse: success(object(['settings'], { settings: ref('ReceivingSettings') })),
  };
}

/** The paths of receiving; `responses` builds the answers (success schema and errors). */
export function receivingPaths(responses: (schema: string, description: string) => JsonObject): JsonObject {
  const requestId = { $ref: '#/components/parameters/RequestId' };
  const id = (description: string): JsonObject => ({
    name: 'id',
    in: 'path',
    required: true,
    description,
    schema: { type: 'string' },
  });
  const tags = ['inbound'];
  return {
    '/inbound/routes': {
      get: {
        operationId: 'listReceivingRoutes',
        summary: "The project's receiving routes; needs `read`",
        tags,
        parameters: [requestId],
        responses: responses('ReceivingRoutesResponse', 'Receiving routes'),
      },
      post: {
        operationId: 'createReceivingRoute',
        summary:
          'Add a receiving route (an address pattern taken by any project is 409 `CONFLICT`); needs `full`',
        tags,
        parameters: [requestId],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref('ReceivingRouteCreate') } },
        },
        responses: responses('ReceivingRouteResponse', 'Receiving route created'),
      },
    },
    '/inbound/routes/{id}': {
      delete: {
        operationId: 'deleteReceivingRoute',
        summary: 'Remove a receiving route (the messages it took stay); needs `full`',
        tags,
        parameters: [id("The route's id."), requestId],
        responses: responses('ReceivingRouteDeletedResponse', 'Receiving route deleted'),
      },
    },
    '/inbound/messages': {
      get: {
        operationId: 'listInboundMessages',
        summary: 'Received messages, newest first; needs `read`',
        tags,
        parameters: [
          { name: 'before', in: 'query', schema: { type: 'string' }, description: 'A `nextCursor`.' },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 } },
          requestId,
        ],
        responses: responses('InboundMessagesResponse', 'Received messages'),
      },
    },
    '/inbound/messages/{id}': {
      get: {
        operationId: 'getInboundMessage',
        summary: 'One received message; needs `read`',
        tags,
        parameters: [id("The message's id."), requestId],
        responses: responses('InboundMessageResponse', 'Received message'),
      },
    },
    '/inbound/settings': {
      get: {
        operationId: 'getReceivingSettings',
        summary: "The project's receiving settings (retention, size cap, reply addresses); needs `read`",
        tags,
        parameters: [requestId],
        responses: responses('ReceivingSettingsResponse', 'Receiving settings'),
      },
      patch: {
        operationId: 'updateReceivingSettings',
        summary: "Change the project's receiving settings; needs `full`",
        tags,
        parameters: [requestId],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref('ReceivingSettingsUpdate') } },
        },
        responses: responses('ReceivingSettingsResponse', 'Receiving settings updated'),
      },
    },
    '/inbound/attachments/{token}': {
      get: {
        operationId: 'downloadInboundAttachment',
        summary:
          'An attachment of a received message, by the signed token of its `url` (no key; edited or expired: 404)',
        tags,
        security: [],
        parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' } }, requestId],
        responses: {
          '200': {
            description: 'The attachment’s bytes, as received',
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          },
          '404': { description: 'Edited, expired, or the message is gone (retention, erasure)' },
        },
      },
    },
  };
}
