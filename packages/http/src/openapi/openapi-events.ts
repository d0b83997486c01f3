import { EVENT_TYPES, REASON_NAMES, reasonGroup } from '@mailroom/core';

/** A JSON object of the generated document. */
type JsonObject = { [key: string]: unknown };

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });

/** The JSON Schema of an event: the body of every webhook request and an item of `GET /events`. */
export function eventSchemas(): JsonObject {
  const nullableString = { type: ['string', 'null'] };
  const success = (data: JsonObject): JsonObject => ({
    type: 'object',
    required: ['message', 'statusCode', 'data'],
    properties: { message: { type: 'string' }, statusCode: { const: 200 }, data },
  });
  const endpoint: JsonObject = {
    type: 'object',
    required: ['id', 'url', 'events', 'enabled', 'state'],
    properties: {
      id: { type: 'string', description: '`wh_...`' },
      url: { type: 'string', format: 'uri' },
      events: { type: ['array', 'null'], items: { enum: EVENT_TYPES }, description: 'null: every type.' },
      enabled: { type: 'boolean' },
      disabledReason: nullableString,
      failingSince: { type: ['string', 'null'], format: 'date-time' },
      circuitOpenUntil: {
        type: ['string', 'null'],
        format: 'date-time',
        description:
          'While the circuit is open (after failed attempts in a row), nothing is sent until this time, then ' +
          'one probe; its messages wait, no retry is spent. null: closed.',
      },
      state: {
        enum: ['healthy', 'circuit_open', 'disabled'],
        description:
          '`circuit_open` while `circuitOpenUntil` is set; `disabled` by the user or after failing for days.',
      },
      createdAt: { type: 'string', format: 'date-time' },
    },
  };
  return {
    Event: {
      type: 'object',
      description:
        'One event. The webhook body is `{ type, created_at, data }`, signed per Standard Webhooks ' +
        '(`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>`); `GET /events` adds ' +
        'the event `id`. Never a message body.',
      required: ['type', 'created_at', 'data'],
      properties: {
        id: { type: 'string', description: '`evt_...` (in `GET /events` only; `data.event_id` in both).' },
        type: { enum: EVENT_TYPES },
        created_at: { type: 'string', format: 'date-time' },
        data: {
          type: 'object',
          required: ['event_id', 'project_id'],
          properties: {
            event_id: { type: 'string' },
            project_id: { type: 'string' },
            mailing: {
              type: 'object',
              required: ['ref', 'kind'],
              properties: { ref: { type: 'string' }, kind: { enum: ['message', 'broadcast'] } },
            },
            delivery: {
              type: 'object',
              required: ['id', 'message_id', 'address'],
              properties: {
                id: { type: 'string' },
                message_id: {
                  type: 'string',
                  description: 'The RFC 5322 Message-ID, the same on every attempt.',
                },
                address: { type: 'string' },
                attempts: { type: 'integer' },
              },
            },
            address: {
              type: 'string',
              description:
                '`contact.unsubscribed` / `contact.topics_changed` / `contact.groups_changed` / `contact.subscribed` / `contact.confirmed` / `automation.*`: the address.',
            },
            form_ref: {
              type: 'string',
              description: '`contact.subscribed` / `contact.confirmed`: the signup form (`frm_...`).',
            },
            topic: {
              ...nullableString,
              description: '`contact.subscribed` / `contact.confirmed`: the form’s topic.',
            },
            group: {
              ...nullableString,
              description: '`contact.subscribed` / `contact.confirmed`: the form’s audience group.',
            },
            pending: {
              type: 'boolean',
              description:
                '`contact.subscribed`: true when the signup waits for its confirmation (double opt-in).',
            },
            topics: {
              type: 'array',
              description: '`contact.topics_changed`: the topics whose state changed, with the state after.',
              items: {
                type: 'object',
                required: ['key', 'state'],
                properties: {
                  key: { type: 'string' },
                  state: { enum: ['subscribed', 'unsubscribed', 'pending', null] },
                },
              },
            },
            groups: {
              type: 'array',
              description:
                '`contact.groups_changed`: the groups (by ref) the contact was added to (`member: true`) or removed from.',
              items: {
                type: 'object',
                required: ['ref', 'member'],
                properties: { ref: { type: 'string' }, member: { type: 'boolean' } },
              },
            },
            source: {
              type: 'string',
              description:
                '`contact.unsubscribed` / `contact.topics_changed` / `contact.groups_changed`: where the change came from (`api`, `one-click`, `unsubscribe-page`, `complaint`, ...).',
            },
            automation: {
              type: 'object',
              description:
                '`automation.run_started` / `automation.run_completed` / `automation.run_exited`: the run, its workflow and version, the event that started it, and how it ended.',
              required: ['workflow_id', 'run_id', 'version', 'trigger_event_id'],
              properties: {
                workflow_id: { type: 'string' },
                run_id: { type: 'string' },
                version: { type: 'integer' },
                trigger_event_id: { type: 'string' },
                step: {
                  type: 'string',
                  description:
                    '`automation.webhook`: the step that called; `contact.groups_changed`: the update-contact step.',
                },
                payload: {
                  type: 'object',
                  description: '`automation.webhook`: the payload the workflow definition gave the step.',
                },
                reason: {
                  type: 'string',
                  description:
                    '`completed`, `exit-step`, `exit-event:<name>`, `workflow-deleted`, `failed: …`.',
                },
              },
            },
            response: {
              ...nullableString,
              description: 'The relay or provider answer (SMTP code and text).',
            },
            error: { ...nullableString, description: 'Why it failed, was delayed or was not sent.' },
            next_attempt_at: {
              type: 'string',
              format: 'date-time',
              description: '`email.delivery_delayed`.',
            },
            reason: { type: 'string', description: '`email.suppressed`: `suppressed` or `unsubscribed`.' },
            bounce: {
              type: 'object',
              description:
                '`email.bounced`: why it bounced and what that does to the address. `class` ' +
                '`recipient-hard`: the address does not exist (suppressed); `soft`: counted, suppressed ' +
                'after several in a row; `sender-side`: the destination refused the sender (DMARC, IP ' +
                'reputation, rate, content), the address is never suppressed for it.',
              required: ['reason', 'class', 'status', 'diagnostic', 'source'],
              properties: {
                reason: {
                  enum: REASON_NAMES.filter((r) => reasonGroup(r) !== 'not-a-bounce'),
                  description: "The reason, by Sisimai's names (see the README's bounce section).",
                },
                class: { enum: ['recipient-hard', 'soft', 'sender-side'] },
                status: { ...nullableString, description: 'The RFC 3463 status (`5.7.26`), when known.' },
                diagnostic: { ...nullableString, description: "The remote server's or provider's words." },
                source: {
                  enum: ['dsn', 'text-bounce', 'ses', 'mailgun', 'smtp'],
                  description: 'Where it was learnt (`smtp`: the relay refused the message at send time).',
                },
                reported_address: {
                  type: 'string',
                  description: "The recipient the report named, when it is not the delivery's address.",
                },
                reported_message_id: {
                  type: 'string',
                  description: "The returned copy's Message-ID, when it is not the delivery's.",
                },
              },
            },
            url: { type: 'string', description: '`email.clicked`: the link.' },
            machine: { type: 'boolean', description: '`email.opened` / `email.clicked`: made by a machine.' },
            broadcast_ref: {
              type: 'string',
              description: '`contact.unsubscribed`: the broadcast of the link.',
            },
            counts: { type: 'object', additionalProperties: { type: 'integer' } },
            domain: {
              type: 'object',
              description: '`domain.verified` / `domain.failed`: the domain and the findings of the check.',
              required: ['name', 'state', 'previous_state', 'findings'],
              properties: {
                name: { type: 'string' },
                state: { enum: ['pending', 'verified', 'failed'] },
                previous_state: { enum: ['pending', 'verified', 'failed'] },
                findings: { type: 'array', items: ref('DomainFinding') },
              },
            },
            test: { type: 'boolean', description: 'A test event.' },
          },
        },
      },
    },
    WebhookEndpoint: endpoint,
    EventsResponse: success({
      type: 'object',
      required: ['events', 'next'],
      properties: {
        events: { type: 'array', items: ref('Event') },
        next: { ...nullableString, description: 'Pass as `after` for the next page.' },
      },
    }),
    WebhooksResponse: success({
      type: 'object',
      required: ['webhooks'],
      properties: { webhooks: { type: 'array', items: ref('WebhookEndpoint') } },
    }),
    WebhookAddedResponse: success({
      type: 'object',
      required: ['webhook', 'secret'],
      properties: {
        webhook: ref('WebhookEndpoint'),
        secret: { type: 'string', description: '`whsec_...`: shown only in this answer.' },
      },
    }),
    WebhookSecretResponse: success({
      type: 'object',
      required: ['id', 'secret'],
      properties: { id: { type: 'string' }, secret: { type: 'string' } },
    }),
    WebhookResponse: success({
      type: 'object',
      required: ['webhook'],
      properties: { webhook: ref('WebhookEndpoint') },
    }),
    WebhookRemovedResponse: success({ type: 'object', properties: { id: { type: 'string' } } }),
  };
}

/** The paths of events and webhook endpoints; `responses` builds the answers (success schema and errors). */
export function eventPaths(responses: (schema: string, description: string) => JsonObject): JsonObject {
  const requestId = { $ref: '#/components/parameters/RequestId' };
  const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
  const query = (name: string, description: string, schema: JsonObject = { type: 'string' }) => ({
    name,
    in: 'query',
    required: false,
    description,
    schema,
  });
  return {
    '/events': {
      get: {
        operationId: 'listEvents',
        summary: "The project's events, oldest first, in pages",
        description:
          'Events are written with the change that caused them. Events of the last moments may still appear ' +
          'behind a cursor already read; webhooks push every one.',
        tags: ['events'],
        parameters: [
          requestId,
          query('after', 'The `next` of the previous page.'),
          query('types', 'Comma-separated event types.'),
          query('mailingRef', 'Only events of this message or broadcast.'),
          query('address', 'Only events of this address.'),
          query('limit', 'At most 1000.', { type: 'integer', minimum: 1, default: 100 }),
        ],
        responses: responses('EventsResponse', 'A page of events'),
      },
    },
    '/webhooks': {
      get: {
        operationId: 'listWebhooks',
        summary: "The project's webhook endpoints (never their secrets)",
        tags: ['webhooks'],
        parameters: [requestId],
        responses: responses('WebhooksResponse', 'Webhook endpoints'),
      },
      post: {
        operationId: 'addWebhook',
        summary: 'Add a webhook endpoint; the answer holds its signing secret, shown once',
        description:
          'The URL must be http(s) and is checked like every fetch: private, loopback, link-local and metadata ' +
          'addresses are refused (422 `FETCH_REFUSED`) unless the server allow-lists the host.',
        tags: ['webhooks'],
        parameters: [requestId],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['url'],
                properties: {
                  url: { type: 'string', format: 'uri' },
                  events: {
                    type: 'array',
                    items: { enum: EVENT_TYPES },
                    description: 'Default: every type.',
                  },
                  enabled: { type: 'boolean', default: true },
                },
              },
            },
          },
        },
        responses: responses('WebhookAddedResponse', 'Webhook endpoint added'),
      },
    },
    '/webhooks/{id}': {
      patch: {
        operationId: 'setWebhookEnabled',
        summary: 'Enable or disable a webhook endpoint',
        description:
          'Enabling also clears an automatic disable (every attempt failed for 5 days) and the failure record. ' +
          'Events written while an endpoint is disabled are not sent to it.',
        tags: ['webhooks'],
        parameters: [idParameter, requestId],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { type: 'object', required: ['enabled'], properties: { enabled: { type: 'boolean' } } },
            },
          },
        },
        responses: responses('WebhookResponse', 'Webhook endpoint enabled or disabled'),
      },
      delete: {
        operationId: 'removeWebhook',
        summary: 'Remove a webhook endpoint',
        tags: ['webhooks'],
        parameters: [idParameter, requestId],
        responses: responses('WebhookRemovedResponse', 'Webhook endpoint removed'),
      },
    },
    '/webhooks/{id}/rotate-secret': {
      post: {
        operationId: 'rotateWebhookSecret',
        summary: "Replace a webhook endpoint's signing secret; the answer holds the new one, shown once",
        tags: ['webhooks'],
        parameters: [idParameter, requestId],
        responses: responses('WebhookSecretResponse', 'Secret rotated'),
      },
    },
  };
}
