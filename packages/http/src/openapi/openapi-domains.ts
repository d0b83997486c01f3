/** A JSON object of the generated document. */
type JsonObject = { [key: string]: unknown };

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const dateTime = { type: 'string', format: 'date-time' };
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' };
const nullableString = { type: ['string', 'null'] };
const RECORD_KINDS = ['dkim', 'spf', 'dmarc', 'dmarc-report-auth', 'return-path-mx', 'return-path-spf'];

/** The JSON Schemas of sending domains: a domain, its keys, its records to publish, its findings. */
export function domainSchemas(): JsonObject {
  const success = (data: JsonObject): JsonObject => ({
    type: 'object',
    required: ['message', 'statusCode', 'data'],
    properties: { message: { type: 'string' }, statusCode: { const: 200 }, data },
  });
  const record: JsonObject = {
    type: 'object',
    description: 'A DNS record to publish, ready to copy. Names are full names without a trailing dot.',
    required: ['kind', 'type', 'name', 'value'],
    properties: {
      kind: { enum: RECORD_KINDS },
      type: { enum: ['TXT', 'MX'] },
      name: { type: 'string' },
      value: {
        type: 'string',
        description:
          'TXT text without quotes (a zone file splits a long one into strings of 255 characters), or the MX host.',
      },
      priority: { type: 'integer', description: 'MX preference.' },
      note: { type: 'string', description: 'Why or how, when the value is advice.' },
    },
  };
  return {
    DomainRecordToPublish: record,
    DomainFinding: {
      type: 'object',
      description: 'What a check saw of one record.',
      required: ['kind', 'type', 'name', 'state', 'actual'],
      properties: {
        kind: { enum: [...RECORD_KINDS, 'bimi'] },
        type: { enum: ['TXT', 'MX'] },
        name: { type: 'string' },
        state: {
          enum: ['found', 'missing', 'wrong', 'no-answer'],
          description:
            '`no-answer`: DNS did not answer; nothing is concluded and the domain is not verified.',
        },
        expected: { type: 'string', description: 'The exact value to publish.' },
        actual: { type: 'array', items: { type: 'string' }, description: 'What DNS answered at the name.' },
        problem: { type: 'string', description: 'Why the state is not `found`.' },
        optional: { type: 'boolean', description: 'Not needed for the domain to be verified.' },
      },
    },
    DkimKey: {
      type: 'object',
      description: 'A DKIM key of the domain (never its private key).',
      required: ['selector', 'algorithm', 'state', 'record'],
      properties: {
        selector: { type: 'string' },
        algorithm: { enum: ['rsa', 'ed25519'] },
        state: {
          enum: ['pending', 'active', 'retiring', 'retired'],
          description:
            '`pending`: its record not seen yet; `active`: mail is signed with it; `retiring`: replaced, keep its record until `retireAt`; `retired`: its record may go.',
        },
        record: ref('DomainRecordToPublish'),
        createdAt: dateTime,
        activatedAt: nullableDateTime,
        retireAt: nullableDateTime,
      },
    },
    Domain: {
      type: 'object',
      required: ['domain', 'state', 'check', 'keys', 'records', 'findings'],
      properties: {
        domain: { type: 'string', description: 'The normalised name (lower case, punycode).' },
        state: {
          enum: ['pending', 'verified', 'failed'],
          description: '`failed`: was verified, then a required record went missing or wrong.',
        },
        check: {
          enum: ['verified', 'failed', 'no-answer', null],
          description: 'The verdict of the last check; null before the first.',
        },
        returnPath: nullableString,
        returnPathMx: nullableString,
        dmarcReports: nullableString,
        signingSelector: { ...nullableString, description: 'The selector new mail is signed with.' },
        keys: { type: 'array', items: ref('DkimKey') },
        records: { type: 'array', items: ref('DomainRecordToPublish') },
        findings: { type: ['array', 'null'], items: ref('DomainFinding') },
        checkedAt: nullableDateTime,
        nextCheckAt: dateTime,
        createdAt: dateTime,
      },
    },
    DomainResponse: success({ type: 'object', required: ['domain'], properties: { domain: ref('Domain') } }),
    DomainsResponse: success({
      type: 'object',
      required: ['domains'],
      properties: { domains: { type: 'array', items: ref('Domain') } },
    }),
    DomainRemovedResponse: success({ type: 'object', properties: { domain: { type: 'string' } } }),
  };
}

/** The paths of sending domains; `responses` builds the answers (success schema and errors). */
export function domainPaths(responses: (schema: string, description: string) => JsonObject): JsonObject {
  const requestId = { $ref: '#/components/parameters/RequestId' };
  const nameParameter = {
    name: 'name',
    in: 'path',
    required: true,
    description:
      'The domain (normalised: `Acme.COM.` is `acme.com`; an IP address or a name without a dot is 400).',
    schema: { type: 'string' },
  };
  const keyType = { enum: ['rsa', 'ed25519'], default: 'rsa' };
  return {
    '/domains': {
      get: {
        operationId: 'listDomains',
        summary: "The project's sending domains, with their records and the findings of their last check",
        tags: ['domains'],
        parameters: [requestId],
        responses: responses('DomainsResponse', 'Sending domains'),
      },
      post: {
        operationId: 'addDomain',
        summary:
          'Add a sending domain: a DKIM key is made for it, and the answer lists the records to publish',
        description:
          'The private key is stored sealed with the installation secret and never shown. The domain is ' +
          '`pending` until a check finds its records (`POST /domains/{name}/verify`, or the scheduled check).',
        tags: ['domains'],
        parameters: [requestId],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['domain'],
                properties: {
                  domain: { type: 'string', examples: ['acme.com'] },
                  selector: { type: 'string', description: 'Default: `mr` and the date, `mr20260829`.' },
                  keyType,
                  returnPath: { type: 'string', description: 'The return-path (bounce) domain of its mail.' },
                  returnPathMx: { type: 'string', description: 'The host its MX must name.' },
                  dmarcReports: { type: 'string', description: 'Default: `dmarc@<domain>`.' },
                },
              },
            },
          },
        },
        responses: responses('DomainResponse', 'Domain added'),
      },
    },
    '/domains/{name}': {
      get: {
        operationId: 'getDomain',
        summary: 'One sending domain',
        tags: ['domains'],
        parameters: [nameParameter, requestId],
        responses: responses('DomainResponse', 'Sending domain'),
      },
      delete: {
        operationId: 'removeDomain',
        summary: 'Remove a sending domain and its keys',
        tags: ['domains'],
        parameters: [nameParameter, requestId],
        responses: responses('DomainRemovedResponse', 'Domain removed'),
      },
    },
    '/domains/{name}/verify': {
      post: {
        operationId: 'verifyDomain',
        summary: 'Check the domain through DNS now: each record found, missing, wrong or no-answer',
        description:
          'Writes the outcome as the scheduled check does. A verified domain that lost a record becomes ' +
          '`failed` and emits `domain.failed`; a check without an answer from DNS changes nothing.',
        tags: ['domains'],
        parameters: [nameParameter, requestId],
        responses: responses('DomainResponse', 'Domain checked'),
      },
    },
    '/domains/{name}/rotate-dkim': {
      post: {
        operationId: 'rotateDkim',
        summary: 'Make a new DKIM key (new selector): mail is signed with it once its record is seen',
        description:
          'The old key stays valid for the grace period (7 days by default) after the new one is in use.',
        tags: ['domains'],
        parameters: [nameParameter, requestId],
        requestBody: {
          required: false,
          content: {
            'application/json': {
              schema: { type: 'object', properties: { selector: { type: 'string' }, keyType } },
            },
          },
        },
        responses: responses('DomainResponse', 'Rotation started'),
      },
    },
  };
}
