import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  batchRequestSchema,
  broadcastRequestSchema,
  parseBroadcastRequest,
  parseSendRequest,
  sendRequestSchema,
} from '../src/request/index.js';
import { onlyValidationErrors, validSend } from './request-outcomes.js';

const parsers = [
  (body: unknown) => parseSendRequest(body),
  (body: unknown) => parseBroadcastRequest(body),
  (body: unknown) => parseBroadcastRequest(body, { recipientsPerBatch: 3 }),
];

describe('garbage in: only VALIDATION_FAILED out', () => {
  it.each([
    null,
    undefined,
    0,
    42,
    Number.NaN,
    '',
    'a'.repeat(1_000_000),
    true,
    [],
    [validSend],
    {},
    Object.create(null),
    new Date(),
    () => 1,
    Symbol('x'),
    10n,
  ])('refuses the body %s', (body) => {
    for (const parse of parsers) expect(onlyValidationErrors(() => parse(body))).toBe('refused');
  });

  it('survives arbitrary JSON bodies (fast-check)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (body) => {
        for (const parse of parsers) onlyValidationErrors(() => parse(body));
      }),
      { numRuns: 300 },
    );
  });

  it('survives arbitrary values in every known field (fast-check)', () => {
    const keys = [
      'subject',
      'sender',
      'message',
      'template',
      'recipients',
      'preheader',
      'replyAddress',
      'attachments',
      'options',
      'invitation',
      'sources',
      'audience',
      'broadcastRef',
      '__proto__',
      'constructor',
    ];
    const value = fc.oneof(
      fc.anything(),
      fc.jsonValue(),
      fc.constantFrom('a@b.co', 'A <a@b.co>', 'data:x;base64,AAAA', '2025-12-25T10:00:00Z', 'CSV', ''),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...keys), value), fc.boolean(), (patch, withBase) => {
        const body = withBase ? { ...validSend, ...patch } : patch;
        for (const parse of parsers) onlyValidationErrors(() => parse(body));
      }),
      { numRuns: 400 },
    );
  });

  it('survives nested garbage inside recipients, sources and attachments (fast-check)', () => {
    const item = fc.dictionary(
      fc.constantFrom('address', 'name', 'variables', 'type', 'config', 'ref', 'label', 'url', 'content'),
      fc.anything(),
    );
    fc.assert(
      fc.property(fc.array(item, { maxLength: 4 }), (list) => {
        onlyValidationErrors(() => parseSendRequest({ ...validSend, recipients: list, attachments: list }));
        onlyValidationErrors(() =>
          parseBroadcastRequest({ broadcastRef: 'bc_1', recipients: list, sources: list }),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a body whose getters throw (an embedding caller), as a validation failure', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('boom');
        },
        has() {
          throw new Error('boom');
        },
      },
    );
    for (const parse of parsers) expect(onlyValidationErrors(() => parse(hostile))).toBe('refused');
  });
});

describe('prototype pollution and hostile variables', () => {
  it('drops __proto__ keys from variables and never touches Object.prototype', () => {
    const body = JSON.parse(
      JSON.stringify(validSend).replace(
        '"variables":{"a":1}',
        '"variables":{"a":1,"__proto__":{"polluted":"yes"},"nested":{"__proto__":{"polluted":"yes"},"b":2}}',
      ),
    );
    const withTemplate = JSON.parse(
      '{"subject":"x","sender":"a@b.co","recipients":"c@d.co","template":{"ref":"t","variables":{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}}}',
    );
    const request = parseSendRequest(body);
    const templated = parseSendRequest(withTemplate);
    const variables = request.recipients[0]?.variables ?? {};
    expect(variables).toEqual({ a: 1, nested: { b: 2 } });
    expect(Object.getPrototypeOf(variables)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(variables.nested)).toBe(Object.prototype);
    expect(Object.keys(templated.template?.variables ?? {})).toEqual(['constructor']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('ignores __proto__ at the top level and in sources', () => {
    const body = JSON.parse(
      '{"__proto__":{"subject":"injected"},"broadcastRef":"bc_1","sources":[{"type":"CSV","config":{"label":"l","columnMappings":{"__proto__":"x","Email":"address"}}}]}',
    );
    const parsed = parseBroadcastRequest(body);
    expect(parsed).toEqual({
      kind: 'batch',
      request: {
        broadcastRef: 'bc_1',
        recipients: [],
        sources: [{ kind: 'csv', label: 'l', url: null, columnMappings: { Email: 'address' }, topic: null }],
      },
    });
    expect(({} as Record<string, unknown>).subject).toBeUndefined();
  });

  it('refuses variables nested too deep, cyclic, or not JSON, as issues', () => {
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 10_000; i++) deep = { next: deep };
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    for (const variables of [
      deep,
      cyclic,
      { d: new Date() },
      { f: () => 1 },
      { n: Number.POSITIVE_INFINITY },
      { b: 1n },
    ]) {
      const outcome = onlyValidationErrors(() =>
        parseSendRequest({ ...validSend, recipients: [{ address: 'ann@example.com', variables }] }),
      );
      expect(outcome).toBe('refused');
    }
    const nested = JSON.parse(`${'['.repeat(50_000)}${']'.repeat(50_000)}`);
    expect(
      onlyValidationErrors(() =>
        parseSendRequest({ ...validSend, template: { ref: 't', variables: { nested } } }),
      ),
    ).toBe('refused');
  });
});

describe('JSON Schema', () => {
  it('turns every schema into JSON Schema, in input and output mode', () => {
    for (const schema of [sendRequestSchema, broadcastRequestSchema, batchRequestSchema]) {
      for (const io of ['input', 'output'] as const) {
        const json = z.toJSONSchema(schema, { io });
        expect(json.type).toBe('object');
      }
    }
  });

  it('describes the accepted wire shapes', () => {
    const send = z.toJSONSchema(sendRequestSchema, { io: 'input' }) as {
      required?: string[];
      properties: Record<string, { anyOf?: Array<{ type?: unknown }>; description?: string }>;
    };
    expect(send.required).toEqual(expect.arrayContaining(['sender', 'recipients']));
    // Required unless a template gives the default: a rule JSON Schema cannot say, so its description does.
    expect(send.required).not.toContain('subject');
    expect(send.properties.subject?.description).toMatch(/Required with message.*default subject/);
    expect(send.properties.sender?.anyOf?.map((branch) => branch.type)).toEqual(['string', 'object']);
    expect(send.properties.recipients?.anyOf?.map((branch) => branch.type)).toEqual([
      'string',
      'object',
      'array',
    ]);
    const batch = z.toJSONSchema(batchRequestSchema, { io: 'input' }) as { required?: string[] };
    expect(batch.required).toEqual(['broadcastRef']);
  });
});
