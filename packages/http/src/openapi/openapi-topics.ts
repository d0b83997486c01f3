/** A JSON object of the generated document. */
type JsonObject = { [key: string]: unknown };

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const dateTime = { type: 'string', format: 'date-time' };
const nullableString = { type: ['string', 'null'] };
const key = {
  type: 'string',
  pattern: '^[a-z0-9][a-z0-9._-]{0,63}$',
  description: '1 to 64 of `a-z 0-9 . _ -`, starting with a letter or digit.',
};
const topicDefault = {
  enum: ['opt-in', 'opt-out'],
  description: '`opt-out`: contacts receive it until they unsubscribe; `opt-in`: only once they subscribe.',
};
const visibility = {
  enum: ['public', 'private'],
  description: '`public` topics are shown to contacts (the unsubscribe page); `private` ones are not.',
};

const doubleOptIn = {
  type: 'boolean',
  description: 'Signups through a form stay `pending` until confirmed from a mailed link (double opt-in).',
};

/** The JSON Schemas of topics and consent (issue 38). */
export function topicSchemas(): JsonObject {
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
    Topic: object(
      ['key', 'name', 'description', 'default', 'visibility', 'doubleOptIn', 'createdAt', 'updatedAt'],
      {
        key,
        name: { type: 'string' },
        description: nullableString,
        default: topicDefault,
        visibility,
        doubleOptIn,
        createdAt: dateTime,
        updatedAt: dateTime,
      },
    ),
    TopicCreate: {
      type: 'object',
      additionalProperties: false,
      required: ['key', 'name'],
      properties: {
        key,
        name: { type: 'string', minLength: 1, maxLength: 256 },
        description: { type: ['string', 'null'], maxLength: 2000 },
        default: { ...topicDefault, description: '@default opt-in' },
        visibility: { ...visibility, description: '@default public' },
        doubleOptIn: { ...doubleOptIn, description: `${doubleOptIn.description} @default false` },
      },
    },
    TopicPatch: {
      type: 'object',
      additionalProperties: false,
      description: 'Every field optional; the key never changes.',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 256 },
        description: { type: ['string', 'null'], maxLength: 2000 },
        default: topicDefault,
        visibility,
        doubleOptIn,
      },
    },
    ContactTopic: object(['key', 'name', 'visibility', 'state', 'explicit'], {
      key,
      name: { type: 'string' },
      visibility,
      state: {
        enum: ['subscribed', 'unsubscribed', 'pending'],
        description:
          "What the contact receives: its own choice, or the topic's default; `pending`: signed up through a form of a double opt-in topic, not confirmed yet (receives nothing of it).",
      },
      explicit: { type: 'boolean', description: "Whether `state` is the contact's own choice." },
    }),
    ContactTopicsUpdate: {
      type: 'object',
      additionalProperties: false,
      required: ['topics'],
      properties: {
        topics: {
          type: 'object',
          maxProperties: 100,
          additionalProperties: { enum: ['subscribed', 'unsubscribed', null] },
          description:
            "Topic key to state; null clears the contact's choice (the topic's default applies again). An unknown key is 404 and nothing is written.",
        },
      },
    },
    ConsentRecord: object(
      ['id', 'at', 'change', 'topic', 'state', 'source', 'ip', 'userAgent', 'mailingRef', 'wording'],
      {
        id: { type: 'string' },
        at: dateTime,
        change: {
          enum: ['topic', 'unsubscribe', 'resubscribe', 'sent-unsubscribed', 'erasure', 'signup', 'confirm'],
        },
        topic: nullableString,
        state: nullableString,
        source: {
          type: 'string',
          description:
            '`api`, `import:<label>`, `form:<ref>`, `one-click`, `unsubscribe-page`, `preference-page`, `complaint`.',
        },
        ip: nullableString,
        userAgent: nullableString,
        mailingRef: nullableString,
        wording: {
          type: ['string', 'null'],
          description: 'The consent text the contact agreed to (`v<version>: <text>`), for a form signup.',
        },
      },
    ),
    ProjectBrand: object(['name', 'color', 'logo'], {
      name: { type: 'string', description: 'The project’s name (set when the project is made).' },
      color: { type: ['string', 'null'], pattern: '^#[0-9a-fA-F]{6}$' },
      logo: {
        type: ['string', 'null'],
        description: 'A `data:image/(png|jpeg|gif|webp|svg+xml);base64,` URI of at most 64 KiB.',
      },
    }),
    ProjectBrandPatch: {
      type: 'object',
      additionalProperties: false,
      description: 'Absent fields are kept; `null` clears.',
      properties: {
        color: { type: ['string', 'null'], pattern: '^#[0-9a-fA-F]{6}$' },
        logo: { type: ['string', 'null'], maxLength: 87448 },
      },
    },
    ProjectBrandResponse: success(object(['brand'], { brand: ref('ProjectBrand') })),
    TopicsResponse: success(object(['topics'], { topics: { type: 'array', items: ref('Topic') } })),
    TopicResponse: success(object(['topic'], { topic: ref('Topic') })),
    TopicDeletedResponse: success(object(['topic'], { topic: { type: 'string' } })),
    ContactTopicsResponse: success(
      object(['topics'], { topics: { type: 'array', items: ref('ContactTopic') } }),
    ),
    ConsentHistoryResponse: success(
      object(['consent', 'nextCursor'], {
        consent: { type: 'array', items: ref('ConsentRecord') },
        nextCursor: {
          type: ['string', 'null'],
          description: 'Pass as `cursor` to get the next page; null on the last page.',
        },
      }),
    ),
  };
}

/** The paths of topics and consent; `responses` builds the answers (success schema and errors). */
export function topicPaths(responses: (schema: string, description: string) => JsonObject): JsonObject {
  const requestId = { $ref: '#/components/parameters/RequestId' };
  const param = (name: string, description: string): JsonObject => ({
    name,
    in: 'path',
    required: true,
    description,
    schema: { type: 'string' },
  });
  const keyParam = param('key', "The topic's key.");
  const email = param('email', 'The address, percent-encoded.');
  const body = (schema: string): JsonObject => ({
    required: true,
    content: { 'application/json': { schema: ref(schema) } },
  });
  const tags = ['topics'];
  return {
    '/topics': {
      get: {
        operationId: 'listTopics',
        summary: "The project's topics, by key; needs `read`",
        tags,
        parameters: [requestId],
        responses: responses('TopicsResponse', 'Topics'),
      },
      post: {
        operationId: 'createTopic',
        summary: 'Create a topic (an existing key is 409 `CONFLICT`); needs `full`',
        tags,
        parameters: [requestId],
        requestBody: body('TopicCreate'),
        responses: responses('TopicResponse', 'Topic created'),
      },
    },
    '/topics/{key}': {
      get: {
        operationId: 'getTopic',
        summary: 'One topic; needs `read`',
        tags,
        parameters: [keyParam, requestId],
        responses: responses('TopicResponse', 'Topic'),
      },
      patch: {
        operationId: 'updateTopic',
        summary: 'Change a topic’s name, description, default or visibility; needs `full`',
        tags,
        parameters: [keyParam, requestId],
        requestBody: body('TopicPatch'),
        responses: responses('TopicResponse', 'Topic updated'),
      },
      delete: {
        operationId: 'deleteTopic',
        summary:
          "Delete a topic and the contacts' choices for it (their consent history stays); needs `full`",
        tags,
        parameters: [keyParam, requestId],
        responses: responses('TopicDeletedResponse', 'Topic deleted'),
      },
    },
    '/audience/profiles/{email}/topics': {
      get: {
        operationId: 'getContactTopics',
        summary: 'Every topic of the project with the contact’s state; needs `read`',
        tags,
        parameters: [email, requestId],
        responses: responses('ContactTopicsResponse', 'Topics of the contact'),
      },
      put: {
        operationId: 'setContactTopics',
        summary:
          'Set or clear a contact’s topic states: each change is a consent record (source `api`, with the caller’s IP and user agent) and a `contact.topics_changed` event; needs `full`',
        tags,
        parameters: [email, requestId],
        requestBody: body('ContactTopicsUpdate'),
        responses: responses('ContactTopicsResponse', 'Topics updated'),
      },
    },
    '/audience/profiles/{email}/consent': {
      get: {
        operationId: 'getConsentHistory',
        summary: 'A contact’s consent history, oldest first (kept under a hash after erasure); needs `read`',
        tags,
        parameters: [
          email,
          { name: 'cursor', in: 'query', required: false, schema: { type: 'string' } },
          {
            name: 'limit',
            in: 'query',
            required: false,
            schema: { type: 'integer', minimum: 1, maximum: 500 },
          },
          requestId,
        ],
        responses: responses('ConsentHistoryResponse', 'Consent history'),
      },
    },
    '/project/brand': {
      get: {
        operationId: 'getProjectBrand',
        summary: 'The project’s name, colour and logo on the pages its contacts see; needs `read`',
        tags,
        parameters: [requestId],
        responses: responses('ProjectBrandResponse', 'Brand'),
      },
      patch: {
        operationId: 'updateProjectBrand',
        summary: 'Set or clear (`null`) the colour and logo of the preference centre; needs `full`',
        tags,
        parameters: [requestId],
        requestBody: body('ProjectBrandPatch'),
        responses: responses('ProjectBrandResponse', 'Brand updated'),
      },
    },
  };
}

/** The preference centre's page (public, HTML): issue 38. */
export function preferencePaths(): JsonObject {
  const token = {
    name: 'token',
    in: 'path',
    required: true,
    description: 'The contact’s token, as `{{ preferences_url }}` printed it.',
    schema: { type: 'string' },
  };
  const page = { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } };
  const refused = {
    '404': { description: 'Forged, altered or foreign token (an HTML page)' },
    '410': { description: 'The contact was erased (an HTML page)' },
  };
  return {
    '/preferences/{token}': {
      get: {
        operationId: 'preferencesPage',
        summary: 'The contact’s preference page: the public topics with its state; never changes anything',
        tags: ['unsubscribe'],
        security: [],
        parameters: [token],
        responses: { '200': page, ...refused },
      },
      post: {
        operationId: 'savePreferences',
        summary:
          'Save the page’s form (`application/x-www-form-urlencoded`: `_csrf`, `action` save | unsubscribe-all | resubscribe, `topic` per ticked box); consent records of source `preference-page`',
        tags: ['unsubscribe'],
        security: [],
        parameters: [token],
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: {
                type: 'object',
                required: ['_csrf'],
                properties: {
                  _csrf: { type: 'string' },
                  action: { enum: ['save', 'unsubscribe-all', 'resubscribe'] },
                  topic: { type: 'array', items: { type: 'string' } },
                },
              },
            },
          },
        },
        responses: {
          '200': page,
          '403': { description: 'Missing, foreign or expired CSRF token: the page again, nothing saved' },
          ...refused,
        },
      },
    },
  };
}
