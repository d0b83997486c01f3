import { DELIVERY_STATUSES, EVENT_TYPES } from '@mailroom/core';

/** A JSON object of the generated document. */
type JsonObject = { [key: string]: unknown };

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const dateTime = { type: 'string', format: 'date-time' };
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' };
const nullableString = { type: ['string', 'null'] };
const nextCursor = {
  type: ['string', 'null'],
  description: 'Pass as `cursor` to get the next page; null on the last page.',
};
const MAILING_STATUSES = ['queued', 'scheduled', 'sending', 'completed', 'cancelled', 'failed'];

/** The JSON Schemas of the audience (groups, profiles, imports) and of broadcast and message status. */
export function audienceSchemas(): JsonObject {
  const success = (data: JsonObject): JsonObject => ({
    type: 'object',
    required: ['message', 'statusCode', 'data'],
    properties: { message: { type: 'string' }, statusCode: { const: 200 }, data },
  });
  const object = (required: string[], properties: JsonObject, extra: JsonObject = {}): JsonObject => ({
    type: 'object',
    required,
    properties,
    ...extra,
  });
  const counts = {
    type: 'object',
    description:
      'Deliveries by status (every status present, 0 when none). For a mailing of 10,000 deliveries or more, the counts of the status reads may be up to 1 second old: reads within a second share one count, so that polling a large broadcast does not slow its sending. The answers of cancel and reschedule are counted fresh.',
    required: [...DELIVERY_STATUSES],
    properties: Object.fromEntries(DELIVERY_STATUSES.map((s) => [s, { type: 'integer' }])),
  };
  const progress = {
    status: { enum: ['pending', 'running', 'done', 'failed'] },
    url: {
      ...nullableString,
      description: 'The CSV URL without its query string (which may carry a token).',
    },
    rowsDone: { type: 'integer', description: 'Data rows read so far.' },
    rowsFailed: { type: 'integer', description: 'Rows refused (a bad address...).' },
    rowErrors: {
      type: 'array',
      description: 'Refused rows with their line numbers (the first 100).',
      items: object(['line', 'reason'], { line: { type: 'integer' }, reason: { type: 'string' } }),
    },
    error: { ...nullableString, description: 'Why the whole job failed, if it did.' },
    createdAt: dateTime,
    updatedAt: dateTime,
  };
  const mailing = {
    ref: { type: 'string' },
    kind: { enum: ['message', 'broadcast'] },
    status: { enum: MAILING_STATUSES },
    subject: { type: 'string' },
    sender: object(['address', 'name'], { address: { type: 'string' }, name: { type: 'string' } }),
    createdAt: dateTime,
    scheduleFor: nullableDateTime,
    batchCount: { type: 'integer' },
    counts: ref('DeliveryCounts'),
    lateByMs: { type: ['integer', 'null'] },
    waiting: {
      type: 'array',
      description:
        'A broadcast sent at local times or in a sending window: its deliveries not yet due, by the UTC hour they wait for.',
      items: object(['hour', 'count'], { hour: dateTime, count: { type: 'integer' } }),
    },
  };
  return {
    DeliveryCounts: counts,
    AudienceGroup: object(['ref', 'name', 'doubleOptIn', 'members', 'createdAt'], {
      ref: { type: 'string' },
      name: nullableString,
      doubleOptIn: { type: 'boolean' },
      members: { type: 'integer' },
      createdAt: dateTime,
    }),
    Profile: object(['address', 'name', 'traits', 'status', 'labels', 'createdAt', 'updatedAt'], {
      address: { type: 'string' },
      name: nullableString,
      traits: { type: 'object', additionalProperties: true },
      status: { enum: ['subscribed', 'unsubscribed'] },
      labels: { type: 'array', items: { type: 'string' } },
      createdAt: dateTime,
      updatedAt: dateTime,
      suppression: {
        description:
          'Only in `GET /audience/profiles/{email}`: the address is suppressed (no broadcast mail).',
        oneOf: [
          { type: 'null' },
          object(['reason', 'createdAt'], {
            reason: {
              enum: [
                'hard-bounce',
                'soft-bounce',
                'mailbox-unavailable',
                'complaint',
                'manual',
                'unsubscribe',
              ],
            },
            detail: nullableString,
            createdAt: dateTime,
          }),
        ],
      },
      topics: {
        description: 'Only in `GET /audience/profiles/{email}`: every topic with the contact’s state.',
        type: 'array',
        items: ref('ContactTopic'),
      },
      consent: {
        description:
          'Only in `GET /audience/profiles/{email}`: the consent history, oldest first (the first 500; the rest at `/audience/profiles/{email}/consent`).',
        type: 'array',
        items: ref('ConsentRecord'),
      },
    }),
    ProfilePatch: {
      type: 'object',
      additionalProperties: false,
      description: 'Every field optional; unknown fields are refused (400 naming them).',
      properties: {
        address: {
          type: 'string',
          description:
            'A new address: the profile and its group memberships move to it. An address that has a profile already is 409 `CONFLICT` naming `address`, and nothing is written.',
        },
        name: nullableString,
        traits: {
          type: 'object',
          additionalProperties: true,
          description:
            'Merged onto the stored traits at the top level (RFC 7396): a key set to null is removed.',
        },
        labels: { type: 'array', items: { type: 'string' }, description: 'The whole new label list.' },
      },
    },
    Erasure: object(
      [
        'address',
        'profiles',
        'memberships',
        'suppressions',
        'deliveries',
        'events',
        'webhookMessages',
        'signals',
        'receivedMessages',
      ],
      {
        address: { type: 'string', description: 'The address erased (shown once, in this answer).' },
        profiles: { type: 'integer' },
        memberships: { type: 'integer' },
        suppressions: { type: 'integer' },
        deliveries: {
          type: 'integer',
          description:
            'Deliveries kept for the counts, under `<delivery id>@erased.invalid`, without personal data.',
        },
        events: { type: 'integer' },
        webhookMessages: { type: 'integer' },
        signals: { type: 'integer' },
        receivedMessages: {
          type: 'integer',
          description: 'Received messages (inbound routes) from the address, deleted with their raw bytes.',
        },
      },
      { description: 'Rows removed or rewritten, per kind (see docs/erasure.md).' },
    ),
    ImportRequest: {
      type: 'object',
      required: ['url', 'group'],
      additionalProperties: false,
      properties: {
        url: {
          type: 'string',
          format: 'uri',
          description:
            'The CSV file, downloaded in byte ranges like a broadcast CSV source: the host must answer `Range` with 206.',
        },
        group: {
          type: 'string',
          description: 'The ref of the audience group the rows join (it must exist).',
        },
        label: {
          type: 'string',
          description: 'The label each imported profile gets. Default: the group ref.',
        },
        columnMappings: {
          type: 'object',
          additionalProperties: { type: 'string' },
          description: 'CSV column -> `email`, `name` or a trait name, as a broadcast CSV source takes them.',
        },
      },
    },
    Import: object(['id', 'group', 'label', 'status', 'rowsDone', 'rowsFailed'], {
      id: { type: 'string', description: '`imp_...`' },
      group: { type: 'string' },
      label: { type: 'string' },
      ...progress,
    }),
    Mailing: object(['ref', 'kind', 'status', 'counts'], mailing),
    BroadcastStatus: object(['ref', 'kind', 'status', 'counts', 'sources'], {
      ...mailing,
      sources: {
        type: 'array',
        description: 'The broadcast sources (audience groups, CSV files) and their progress.',
        items: object(['kind', 'name', 'status'], {
          kind: { enum: ['audience', 'csv'] },
          name: { type: 'string', description: 'The group ref or the CSV label.' },
          ...progress,
        }),
      },
    }),
    Recipient: object(['address', 'status', 'attempts', 'messageId', 'timeline'], {
      address: { type: 'string' },
      name: { type: 'string' },
      subject: {
        type: 'string',
        description:
          "The subject this recipient gets: kept with its content, else the message's subject (Liquid) rendered with the recipient's data.",
      },
      status: { enum: [...DELIVERY_STATUSES] },
      attempts: { type: 'integer' },
      messageId: { type: 'string', description: 'The RFC 5322 Message-ID it is sent with.' },
      nextAttemptAt: dateTime,
      sentAt: nullableDateTime,
      lastResponse: nullableString,
      lastError: nullableString,
      createdAt: dateTime,
      updatedAt: dateTime,
      timeline: {
        type: 'array',
        description: 'Its events, oldest first (at most 100).',
        items: object(['id', 'type', 'at', 'details'], {
          id: { type: 'string' },
          type: { enum: [...EVENT_TYPES] },
          at: dateTime,
          details: {
            type: 'object',
            additionalProperties: true,
            description: 'The event data without who it is about: `response`, `error`, `bounce`, `url`...',
          },
        }),
      },
      reports: {
        type: 'array',
        description: 'Bounce and complaint reports received about it.',
        items: object(['kind', 'source', 'createdAt'], {
          kind: { enum: ['hard-bounce', 'soft-bounce', 'sender-side', 'complaint', 'delivered'] },
          source: { type: 'string' },
          reason: nullableString,
          status: nullableString,
          createdAt: dateTime,
        }),
      },
    }),
    MessageStatus: object(['ref', 'kind', 'status', 'counts', 'recipients', 'more'], {
      ...mailing,
      recipients: { type: 'array', items: ref('Recipient') },
      more: { type: 'boolean', description: 'More than the 100 recipients listed.' },
    }),
    AudienceGroupsResponse: success(
      object(['groups'], { groups: { type: 'array', items: ref('AudienceGroup') } }),
    ),
    AudienceGroupResponse: success(object(['group'], { group: ref('AudienceGroup') })),
    AudienceGroupDeletedResponse: success(object(['group'], { group: { type: 'string' } })),
    ProfilesResponse: success(
      object(['profiles', 'nextCursor'], { profiles: { type: 'array', items: ref('Profile') }, nextCursor }),
    ),
    ProfileResponse: success(object(['profile'], { profile: ref('Profile') })),
    ErasureResponse: success(object(['erased'], { erased: ref('Erasure') })),
    ImportResponse: success(object(['import'], { import: ref('Import') })),
    BroadcastsResponse: success(
      object(['broadcasts', 'nextCursor'], {
        broadcasts: { type: 'array', items: ref('Mailing') },
        nextCursor,
      }),
    ),
    BroadcastStatusResponse: success(object(['broadcast'], { broadcast: ref('BroadcastStatus') })),
    MessageStatusResponse: success(object(['message'], { message: ref('MessageStatus') })),
  };
}

/** The paths of the audience and of broadcast and message status; `responses` builds the answers. */
export function audiencePaths(responses: (schema: string, description: string) => JsonObject): JsonObject {
  const requestId = { $ref: '#/components/parameters/RequestId' };
  const path = (name: string, description: string): JsonObject => ({
    name,
    in: 'path',
    required: true,
    description,
    schema: { type: 'string' },
  });
  const paging = [
    {
      name: 'cursor',
      in: 'query',
      required: false,
      description: 'The `nextCursor` of the previous page.',
      schema: { type: 'string' },
    },
    {
      name: 'limit',
      in: 'query',
      required: false,
      description: 'Page size (default 50 for profiles, 25 for broadcasts).',
      schema: { type: 'integer', minimum: 1, maximum: 500 },
    },
  ];
  const group = path('group', 'The audience group ref.');
  const email = path('email', 'The profile address, percent-encoded (`ann%40example.com`).');
  const json = (schema: JsonObject): JsonObject => ({
    required: true,
    content: { 'application/json': { schema } },
  });
  const read = (
    operationId: string,
    summary: string,
    tag: string,
    parameters: unknown[],
    schema: string,
  ) => ({
    get: {
      operationId,
      summary,
      tags: [tag],
      parameters: [...parameters, requestId],
      responses: responses(schema, summary),
    },
  });
  return {
    '/audience/groups': {
      ...read(
        'listAudienceGroups',
        'The audience groups, by ref, with member counts',
        'audience',
        [],
        'AudienceGroupsResponse',
      ),
      post: {
        operationId: 'createAudienceGroup',
        summary: 'Create an audience group (a ref in use is 409)',
        tags: ['audience'],
        parameters: [requestId],
        requestBody: json({
          type: 'object',
          required: ['ref'],
          additionalProperties: false,
          properties: {
            ref: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$' },
            name: nullableString,
            doubleOptIn: {
              type: 'boolean',
              description: 'A form signup joins only once confirmed from the mailed link. @default false',
            },
          },
        }),
        responses: responses('AudienceGroupResponse', 'Group created'),
      },
    },
    '/audience/groups/{group}': {
      delete: {
        operationId: 'deleteAudienceGroup',
        summary: 'Delete a group and its memberships (its profiles stay)',
        tags: ['audience'],
        parameters: [group, requestId],
        responses: responses('AudienceGroupDeletedResponse', 'Group deleted'),
      },
    },
    '/audience/groups/{group}/members': read(
      'listAudienceGroupMembers',
      'The members of a group, by address, in pages',
      'audience',
      [group, ...paging],
      'ProfilesResponse',
    ),
    '/audience/profiles': read(
      'listProfiles',
      'The profiles, by address, in pages; `q` searches by address prefix, `label` by label',
      'audience',
      [
        {
          name: 'q',
          in: 'query',
          required: false,
          description: 'Addresses starting with this text (the domain part compared lower-cased).',
          schema: { type: 'string' },
        },
        {
          name: 'label',
          in: 'query',
          required: false,
          description: 'Profiles with this label.',
          schema: { type: 'string' },
        },
        ...paging,
      ],
      'ProfilesResponse',
    ),
    '/audience/profiles/{email}': {
      ...read('getProfile', 'One profile, with its suppression', 'audience', [email], 'ProfileResponse'),
      patch: {
        operationId: 'updateProfile',
        summary: 'Change a profile: name, traits (merged), labels, or its address',
        tags: ['audience'],
        parameters: [email, requestId],
        requestBody: json(ref('ProfilePatch')),
        responses: responses('ProfileResponse', 'Profile updated'),
      },
      delete: {
        operationId: 'eraseProfile',
        summary:
          'Erase the address: its profile, memberships, suppression and personal data (erasure requests)',
        description:
          'Deliveries stay for the counts, under a placeholder address and without name, variables, traits, content or replies; events, webhook payloads and bounce reports lose the address. See docs/erasure.md. 404 when the project knows nothing of the address.',
        tags: ['audience'],
        parameters: [email, requestId],
        responses: responses('ErasureResponse', 'Address erased'),
      },
    },
    '/audience/imports': {
      post: {
        operationId: 'startAudienceImport',
        summary: 'Import a CSV file into a group: a source job like a broadcast CSV source, adding profiles',
        description:
          'The file is probed now (one byte range: 422 when the host does not serve ranges); the worker then reads it a page at a time, resuming after a crash. No mail is sent.',
        tags: ['audience'],
        parameters: [requestId],
        requestBody: json(ref('ImportRequest')),
        responses: responses('ImportResponse', 'Import started'),
      },
    },
    '/audience/imports/{id}': read(
      'getAudienceImport',
      'An import and its progress',
      'audience',
      [path('id', 'The import id (`imp_...`).')],
      'ImportResponse',
    ),
    '/broadcasts': read(
      'listBroadcasts',
      'The broadcasts, newest first, each with its delivery counts by status',
      'status',
      paging,
      'BroadcastsResponse',
    ),
    '/broadcasts/{ref}': read(
      'getBroadcast',
      'One broadcast with its delivery counts and the progress of its sources',
      'status',
      [path('ref', 'The broadcast ref (`bc_...`).')],
      'BroadcastStatusResponse',
    ),
    '/messages/{ref}': read(
      'getMessage',
      "A message's recipients: delivery status, attempts, events and bounce reports",
      'status',
      [
        path(
          'ref',
          'The `ref` `POST /send/mail` answered (`msg_...`), or an RFC Message-ID, percent-encoded (`%3Cdlv_...%40acme.com%3E`; the angle brackets are optional), which names one recipient of any mailing.',
        ),
      ],
      'MessageStatusResponse',
    ),
  };
}
