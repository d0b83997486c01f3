import {
  MAX_TEMPLATE_SOURCE_BYTES,
  senderAddSchema,
  suppressionAddSchema,
  templateCheckSchema,
  templateCreateSchema,
  templatePreviewSchema,
  templateUpdateSchema,
} from '@mailroom/core';

/** A JSON object of the generated document. */
type JsonObject = { [key: string]: unknown };

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const dateTime = { type: 'string', format: 'date-time' };
const nullableString = { type: ['string', 'null'] };

/**
 * The request bodies of templates, senders and suppressions: the engine's own zod schemas, so the document
 * cannot drift from what the server checks (each is strict: `additionalProperties: false`).
 */
export function resourceRequestSchemas() {
  return {
    TemplateCreateRequest: templateCreateSchema,
    TemplateUpdateRequest: templateUpdateSchema,
    TemplateValidateRequest: templateCheckSchema,
    TemplatePreviewRequest: templatePreviewSchema,
    SenderCreateRequest: senderAddSchema,
    SuppressionCreateRequest: suppressionAddSchema,
  };
}

/** The JSON Schemas of the answers: a template, a sender, a suppression, a page of each. */
export function resourceSchemas(): JsonObject {
  const success = (data: JsonObject): JsonObject => ({
    type: 'object',
    required: ['message', 'statusCode', 'data'],
    properties: { message: { type: 'string' }, statusCode: { const: 200 }, data },
  });
  const page = (name: string, item: string): JsonObject =>
    success({
      type: 'object',
      required: [name, 'nextCursor'],
      properties: {
        [name]: { type: 'array', items: ref(item) },
        nextCursor: {
          ...nullableString,
          description: 'Pass as `cursor` for the next page; null on the last page.',
        },
      },
    });
  const one = (name: string, item: string): JsonObject =>
    success({ type: 'object', required: [name], properties: { [name]: ref(item) } });
  return {
    Template: {
      type: 'object',
      required: ['ref', 'format', 'subject', 'source', 'version', 'createdAt', 'updatedAt'],
      properties: {
        ref: { type: 'string' },
        format: { enum: ['html', 'mjml', 'text'] },
        subject: { ...nullableString, description: 'The default subject (Liquid).' },
        source: { type: 'string', description: 'The source as written.' },
        version: {
          type: 'integer',
          minimum: 1,
          description:
            'Starts at 1; each update makes the next. Mailings keep the content of the version they were accepted with.',
        },
        createdAt: dateTime,
        updatedAt: dateTime,
      },
    },
    TemplateProblem: {
      type: 'object',
      required: ['field', 'line', 'column', 'message'],
      properties: {
        field: { enum: ['source', 'subject'] },
        line: { type: ['integer', 'null'], description: '1-based line in the field.' },
        column: { type: ['integer', 'null'], description: '1-based column (Liquid errors).' },
        message: { type: 'string' },
      },
    },
    Sender: {
      type: 'object',
      required: ['address', 'name', 'dkimSelector', 'createdAt'],
      properties: {
        address: { type: 'string', format: 'email' },
        name: nullableString,
        dkimSelector: {
          ...nullableString,
          description: "The selector of the identity's own DKIM key; null when its domain's key signs.",
        },
        createdAt: dateTime,
      },
    },
    Suppression: {
      type: 'object',
      required: ['address', 'reason', 'detail', 'createdAt'],
      properties: {
        address: { type: 'string', format: 'email' },
        reason: {
          enum: ['manual', 'hard-bounce', 'soft-bounce', 'mailbox-unavailable', 'complaint', 'unsubscribe'],
        },
        detail: nullableString,
        createdAt: { ...dateTime, description: 'When the address was suppressed.' },
      },
    },
    TemplatesResponse: page('templates', 'Template'),
    TemplateResponse: one('template', 'Template'),
    TemplateRemovedResponse: success({ type: 'object', properties: { ref: { type: 'string' } } }),
    TemplateValidationResponse: success({
      type: 'object',
      required: ['valid', 'problems'],
      properties: { valid: { type: 'boolean' }, problems: { type: 'array', items: ref('TemplateProblem') } },
    }),
    TemplatePreviewResponse: success({
      type: 'object',
      required: ['subject', 'html', 'text'],
      properties: { subject: { type: 'string' }, html: nullableString, text: { type: 'string' } },
    }),
    SendersResponse: page('senders', 'Sender'),
    SenderResponse: one('sender', 'Sender'),
    SuppressionsResponse: page('suppressions', 'Suppression'),
    SuppressionResponse: one('suppression', 'Suppression'),
    AddressRemovedResponse: success({ type: 'object', properties: { address: { type: 'string' } } }),
  };
}

/** The paths of templates, senders and suppressions; `responses` builds the answers (success and errors). */
export function resourcePaths(responses: (schema: string, description: string) => JsonObject): JsonObject {
  const requestId = { $ref: '#/components/parameters/RequestId' };
  const pathParameter = (name: string, description: string): JsonObject => ({
    name,
    in: 'path',
    required: true,
    description,
    schema: { type: 'string' },
  });
  const refParameter = pathParameter('ref', 'The template ref.');
  const emailParameter = pathParameter('email', 'The address, URL-encoded (`ann%40example.com`).');
  const paging = [
    {
      name: 'cursor',
      in: 'query',
      description: 'The `nextCursor` of the previous page.',
      schema: { type: 'string' },
    },
    {
      name: 'limit',
      in: 'query',
      description: 'Page size (a positive integer; at most 200 are returned).',
      schema: { type: 'integer', minimum: 1, default: 50 },
    },
  ];
  const body = (schema: string, required = true): JsonObject => ({
    required,
    content: { 'application/json': { schema: ref(schema) } },
  });
  const strict =
    'A field the API does not know is refused with 400 naming it (`issues[].path`), never ignored.';
  return {
    '/templates': {
      get: {
        operationId: 'listTemplates',
        summary: "The project's templates, by ref, in pages",
        tags: ['templates'],
        parameters: [...paging, requestId],
        responses: responses('TemplatesResponse', 'Templates'),
      },
      post: {
        operationId: 'createTemplate',
        summary: 'Create a template (version 1): MJML is compiled now',
        description:
          `A problem in the source or subject is a 400 with one issue per problem at \`source\` or \`subject\`, ` +
          `its line in the message; nothing is written. A source is at most ${MAX_TEMPLATE_SOURCE_BYTES} bytes ` +
          `(1 MiB), a request body at most the server's body limit (413 over it). 409 if the ref exists. ${strict}`,
        tags: ['templates'],
        parameters: [requestId],
        requestBody: body('TemplateCreateRequest'),
        responses: responses('TemplateResponse', 'Template created'),
      },
    },
    '/templates/{ref}': {
      get: {
        operationId: 'getTemplate',
        summary: 'One template, its current version',
        tags: ['templates'],
        parameters: [refParameter, requestId],
        responses: responses('TemplateResponse', 'Template'),
      },
      put: {
        operationId: 'updateTemplate',
        summary: "Write the template's next version",
        description:
          'Checked like a creation; a refused update leaves the current version whole. Absent `format` and ' +
          '`subject` keep the current ones (`subject: null` removes it). Broadcasts and messages already ' +
          `accepted keep the version they were accepted with; later ones use the new one. ${strict}`,
        tags: ['templates'],
        parameters: [refParameter, requestId],
        requestBody: body('TemplateUpdateRequest'),
        responses: responses('TemplateResponse', 'Template updated'),
      },
      delete: {
        operationId: 'removeTemplate',
        summary: 'Remove a template (mailings already accepted are unaffected)',
        tags: ['templates'],
        parameters: [refParameter, requestId],
        responses: responses('TemplateRemovedResponse', 'Template removed'),
      },
    },
    '/templates/{ref}/validate': {
      post: {
        operationId: 'validateTemplate',
        summary: 'Check a source and subject without saving: every MJML and Liquid problem with its line',
        description:
          "Absent fields are the stored template's (an empty body checks it as stored); a ref that does not " +
          'exist needs `format` and `source`. Answers 200 with `valid: false` and the problems; a read key may call it.',
        tags: ['templates'],
        parameters: [refParameter, requestId],
        requestBody: body('TemplateValidateRequest', false),
        responses: responses('TemplateValidationResponse', 'Checked'),
      },
    },
    '/templates/{ref}/preview': {
      post: {
        operationId: 'previewTemplate',
        summary: 'Render the stored template for the given variables: subject, HTML and text',
        description:
          'Without `recipient`, a sample one (Ada Lovelace, ada@example.com). A missing variable under strict ' +
          'variables is a 422 `RENDER_FAILED`. A read key may call it. Rendered off the main thread within the ' +
          "project's render-time budget (10 s per minute by default): over it, 429 `RATE_LIMITED` with `Retry-After`.",
        tags: ['templates'],
        parameters: [refParameter, requestId],
        requestBody: body('TemplatePreviewRequest', false),
        responses: responses('TemplatePreviewResponse', 'Rendered'),
      },
    },
    '/senders': {
      get: {
        operationId: 'listSenders',
        summary: "The project's sender identities, by address, in pages",
        tags: ['senders'],
        parameters: [...paging, requestId],
        responses: responses('SendersResponse', 'Senders'),
      },
      post: {
        operationId: 'addSender',
        summary: 'Add a sender identity (an address the project may send from)',
        description: `The domain part is lower-cased. 409 if the address is one already. ${strict}`,
        tags: ['senders'],
        parameters: [requestId],
        requestBody: body('SenderCreateRequest'),
        responses: responses('SenderResponse', 'Sender added'),
      },
    },
    '/senders/{email}': {
      delete: {
        operationId: 'removeSender',
        summary:
          'Remove a sender identity: requests from it are refused (403); mail already accepted still goes',
        tags: ['senders'],
        parameters: [emailParameter, requestId],
        responses: responses('AddressRemovedResponse', 'Sender removed'),
      },
    },
    '/suppressions': {
      get: {
        operationId: 'listSuppressions',
        summary:
          "The project's suppressed addresses with reason and date, by address, in pages; `q` searches",
        tags: ['suppressions'],
        parameters: [
          {
            name: 'q',
            in: 'query',
            description:
              'Only addresses containing this text (the part after an `@` compared lower-cased, the rest exactly).',
            schema: { type: 'string' },
          },
          ...paging,
          requestId,
        ],
        responses: responses('SuppressionsResponse', 'Suppressions'),
      },
      post: {
        operationId: 'addSuppression',
        summary: 'Suppress an address: it gets no more broadcast mail',
        description: `Replaces the reason and date of an existing suppression. ${strict}`,
        tags: ['suppressions'],
        parameters: [requestId],
        requestBody: body('SuppressionCreateRequest'),
        responses: responses('SuppressionResponse', 'Address suppressed'),
      },
    },
    '/suppressions/{email}': {
      delete: {
        operationId: 'liftSuppression',
        summary: 'Lift a suppression: the address may be mailed again (404 if it is not suppressed)',
        tags: ['suppressions'],
        parameters: [emailParameter, requestId],
        responses: responses('AddressRemovedResponse', 'Suppression lifted'),
      },
    },
  };
}
