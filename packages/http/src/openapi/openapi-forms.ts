/** A JSON object of the generated document. */
type JsonObject = { [key: string]: unknown };

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const dateTime = { type: 'string', format: 'date-time' };
const nullableString = { type: ['string', 'null'] };
const origins = {
  type: 'array',
  maxItems: 50,
  items: { type: 'string', description: 'scheme://host[:port], nothing after' },
  description: 'Origins a browser may post from (CORS); a post from another origin is 403.',
};

/** The JSON Schemas of signup forms (issue 38). */
export function formSchemas(): JsonObject {
  const success = (data: JsonObject): JsonObject => ({
    type: 'object',
    required: ['message', 'statusCode', 'data'],
    properties: { message: { type: 'string' }, statusCode: { const: 200 }, data },
  });
  const fields = {
    name: { type: 'string', minLength: 1, maxLength: 256 },
    group: { type: ['string', 'null'], description: 'The audience group a signup joins (when confirmed).' },
    topic: {
      type: ['string', 'null'],
      description:
        'The topic a signup subscribes to; `pending` until confirmed when the topic has `doubleOptIn`.',
    },
    allowedOrigins: origins,
    consentText: {
      type: 'string',
      minLength: 1,
      maxLength: 5000,
      description:
        'The wording shown next to the form; a changed text is the next version, old ones are kept.',
    },
    sender: { type: 'string', description: 'The confirmation message’s sender (a sender of the project).' },
    confirmTemplate: {
      type: ['string', 'null'],
      description:
        'The confirmation message’s template (`{{ confirm_url }}`, `{{ project_name }}`, `{{ consent_text }}`); null: the built-in one.',
    },
  };
  return {
    Form: {
      type: 'object',
      required: [
        'ref',
        'name',
        'group',
        'topic',
        'allowedOrigins',
        'consentText',
        'consentVersion',
        'consentTexts',
        'sender',
        'confirmTemplate',
        'createdAt',
        'updatedAt',
      ],
      properties: {
        ref: { type: 'string', description: '`frm_...`: the public endpoint is `POST /subscribe/{ref}`.' },
        name: { type: 'string' },
        group: nullableString,
        topic: nullableString,
        allowedOrigins: { type: 'array', items: { type: 'string' } },
        consentText: { type: 'string' },
        consentVersion: { type: 'integer' },
        consentTexts: {
          type: 'array',
          items: {
            type: 'object',
            required: ['version', 'text', 'createdAt'],
            properties: { version: { type: 'integer' }, text: { type: 'string' }, createdAt: dateTime },
          },
        },
        sender: { type: 'string' },
        confirmTemplate: nullableString,
        createdAt: dateTime,
        updatedAt: dateTime,
      },
    },
    FormCreate: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'consentText', 'sender'],
      description: 'At least one of `group` and `topic`.',
      properties: fields,
    },
    FormPatch: {
      type: 'object',
      additionalProperties: false,
      description: 'Every field optional.',
      properties: fields,
    },
    SignupRequest: {
      type: 'object',
      required: ['email'],
      properties: {
        email: { type: 'string', maxLength: 320 },
        name: { type: 'string', maxLength: 256 },
        consent_version: {
          type: 'integer',
          description: 'The consent text version the page showed (default: the current one).',
        },
        website: {
          type: 'string',
          description: 'The honeypot: hidden from people, left empty; a filled one is dropped silently.',
        },
      },
      description: 'Other fields are ignored. Form-encoded posts take the same fields.',
    },
    SignupResponse: success({
      type: 'object',
      required: ['received'],
      properties: { received: { const: true } },
    }),
    FormsResponse: success({
      type: 'object',
      required: ['forms'],
      properties: { forms: { type: 'array', items: ref('Form') } },
    }),
    FormResponse: success({ type: 'object', required: ['form'], properties: { form: ref('Form') } }),
    FormDeletedResponse: success({
      type: 'object',
      required: ['form'],
      properties: { form: { type: 'string' } },
    }),
  };
}

/** The paths of signup forms; `responses` builds the answers (success schema and errors). */
export function formPaths(responses: (schema: string, description: string) => JsonObject): JsonObject {
  const requestId = { $ref: '#/components/parameters/RequestId' };
  const param = (name: string, description: string): JsonObject => ({
    name,
    in: 'path',
    required: true,
    description,
    schema: { type: 'string' },
  });
  const refParam = param('ref', 'The form’s ref (`frm_...`).');
  const tokenParam = param('token', 'The token of a confirmation link.');
  const body = (schema: string): JsonObject => ({
    required: true,
    content: { 'application/json': { schema: ref(schema) } },
  });
  const tags = ['forms'];
  const page = (description: string): JsonObject => ({
    description,
    content: { 'text/html': { schema: { type: 'string' } } },
  });
  return {
    '/forms': {
      get: {
        operationId: 'listForms',
        summary: 'The project’s signup forms; needs `read`',
        tags,
        parameters: [requestId],
        responses: responses('FormsResponse', 'Forms'),
      },
      post: {
        operationId: 'createForm',
        summary: 'Create a signup form (an unknown group, topic, sender or template is 404); needs `full`',
        tags,
        parameters: [requestId],
        requestBody: body('FormCreate'),
        responses: responses('FormResponse', 'Form created'),
      },
    },
    '/forms/{ref}': {
      get: {
        operationId: 'getForm',
        summary: 'One form; needs `read`',
        tags,
        parameters: [refParam, requestId],
        responses: responses('FormResponse', 'Form'),
      },
      patch: {
        operationId: 'updateForm',
        summary: 'Change a form (a new consent text is its next version); needs `full`',
        tags,
        parameters: [refParam, requestId],
        requestBody: body('FormPatch'),
        responses: responses('FormResponse', 'Form updated'),
      },
      delete: {
        operationId: 'deleteForm',
        summary: 'Delete a form (its signups and the consent history stay); needs `full`',
        tags,
        parameters: [refParam, requestId],
        responses: responses('FormDeletedResponse', 'Form deleted'),
      },
    },
    '/subscribe/{ref}': {
      post: {
        operationId: 'subscribe',
        summary: 'A website form’s signup: public, no key; the same answer for every address',
        description:
          'JSON or form-encoded (`application/x-www-form-urlencoded`: the answer is a thanks page). Rate limited per client address and per signed-up address (429 with `Retry-After`); a browser post from an origin the form does not allow is 403. Under the topic’s double opt-in the contact is `pending` and mailed a confirmation link, again at most once per 10 minutes. Events `contact.subscribed` (and `contact.topics_changed`).',
        tags,
        security: [],
        parameters: [refParam],
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: ref('SignupRequest') },
            'application/x-www-form-urlencoded': { schema: ref('SignupRequest') },
          },
        },
        responses: responses('SignupResponse', 'Signup received (the same for known and unknown addresses)'),
      },
      options: {
        operationId: 'subscribePreflight',
        summary: 'CORS preflight: `Access-Control-Allow-Origin` for an allowed origin',
        tags,
        security: [],
        parameters: [refParam],
        responses: { '204': { description: 'Preflight answer' } },
      },
    },
    '/confirm/{token}': {
      get: {
        operationId: 'confirmationPage',
        summary: 'The confirmation link’s page: a button; never changes anything (link scanners open links)',
        tags,
        security: [],
        parameters: [tokenParam],
        responses: {
          '200': page('A confirm button, or "confirmed"'),
          '404': page('Forged, altered or foreign token'),
          '410': page('Expired link, with a "send a new link" button'),
        },
      },
      post: {
        operationId: 'confirmSignup',
        summary: 'Confirm (the page’s button); idempotent; event `contact.confirmed`',
        tags,
        security: [],
        parameters: [tokenParam],
        responses: {
          '200': page('Confirmed'),
          '404': page('Forged, altered or foreign token'),
          '410': page('Expired link: nothing confirmed'),
        },
      },
    },
    '/confirm/{token}/resend': {
      post: {
        operationId: 'resendConfirmation',
        summary: 'Mail a new confirmation link (at most one per 10 minutes)',
        tags,
        security: [],
        parameters: [tokenParam],
        responses: { '200': page('A new link is on its way'), '404': page('Forged or foreign token') },
      },
    },
  };
}
