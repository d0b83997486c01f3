import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isMailroomError } from '../src/base/errors.js';
import {
  FIELD_LIMITS,
  parseBroadcastRequest,
  parseSendRequest,
  sendRequestSchema,
} from '../src/request/index.js';

/**
 * The caps of `request/field-limits.ts`: each one accepts its value at the cap and refuses one past it
 * with an issue whose path names the field; the JSON Schema (the OpenAPI document's source) carries the
 * same numbers; the README's table lists them.
 */

const base = () => ({
  subject: 'Hello',
  sender: { address: 'noreply@acme.test', name: 'Acme' },
  message: 'Hi',
  recipients: [{ address: 'bob@example.com' }],
});

function issuePaths(run: () => unknown): ReadonlyArray<readonly unknown[]> {
  try {
    run();
  } catch (error) {
    if (isMailroomError(error, 'VALIDATION_FAILED')) return (error.issues ?? []).map((i) => i.path);
    throw error;
  }
  return [];
}

const cases: Array<{ field: string; path: unknown[]; body: (n: number) => object; max: number }> = [
  {
    field: 'subject',
    path: ['subject'],
    max: FIELD_LIMITS.subject.max,
    body: (n) => ({ ...base(), subject: 's'.repeat(n) }),
  },
  {
    field: 'preheader',
    path: ['preheader'],
    max: FIELD_LIMITS.preheader.max,
    body: (n) => ({ ...base(), preheader: 'p'.repeat(n) }),
  },
  {
    field: 'message',
    path: ['message'],
    max: FIELD_LIMITS.message.max,
    body: (n) => ({ ...base(), message: 'm'.repeat(n) }),
  },
  {
    field: 'sender.name',
    path: ['sender', 'name'],
    max: FIELD_LIMITS.name.max,
    body: (n) => ({ ...base(), sender: { address: 'noreply@acme.test', name: 'n'.repeat(n) } }),
  },
  {
    field: 'recipients[0].name',
    path: ['recipients', 0, 'name'],
    max: FIELD_LIMITS.name.max,
    body: (n) => ({ ...base(), recipients: [{ address: 'bob@example.com', name: 'n'.repeat(n) }] }),
  },
  {
    field: 'recipients[0] as "Name <address>"',
    path: ['recipients', 0],
    max: FIELD_LIMITS.name.max,
    body: (n) => ({ ...base(), recipients: [`${'n'.repeat(n)} <bob@example.com>`] }),
  },
  {
    field: 'template.ref',
    path: ['template', 'ref'],
    max: FIELD_LIMITS.ref.max,
    body: (n) => ({ ...base(), message: undefined, template: { ref: 'r'.repeat(n) } }),
  },
  {
    field: 'attachments[0].url',
    path: ['attachments', 0, 'url'],
    max: FIELD_LIMITS.url.max,
    body: (n) => ({
      ...base(),
      attachments: [{ name: 'a.pdf', url: `https://files.acme.test/${'u'.repeat(n - 24)}` }],
    }),
  },
  {
    field: 'recipients[0].variables (bytes)',
    path: ['recipients', 0, 'variables'],
    // {"x":"..."} is 8 bytes around the value, and the count takes a comma after every member.
    max: FIELD_LIMITS.recipientVariables.max - 9,
    body: (n) => ({
      ...base(),
      recipients: [{ address: 'bob@example.com', variables: { x: 'v'.repeat(n) } }],
    }),
  },
  {
    field: 'template.variables (bytes)',
    path: ['template', 'variables'],
    max: FIELD_LIMITS.templateVariables.max - 9,
    body: (n) => ({
      ...base(),
      message: undefined,
      template: { ref: 'welcome', variables: { x: 'v'.repeat(n) } },
    }),
  },
  {
    field: 'template.variables (keys at every depth)',
    path: ['template', 'variables'],
    max: FIELD_LIMITS.variableKeys.max - 1,
    body: (n) => ({
      ...base(),
      message: undefined,
      template: {
        ref: 'welcome',
        variables: { nested: Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 1])) },
      },
    }),
  },
];

describe('field caps', () => {
  for (const c of cases) {
    it(`${c.field}: accepted at ${c.max}, refused past it with its path`, () => {
      expect(issuePaths(() => parseSendRequest(c.body(c.max)))).toEqual([]);
      expect(issuePaths(() => parseSendRequest(c.body(c.max + 1)))).toContainEqual(c.path);
    });
  }

  it('refuses the issue reproductions with the field named, on the broadcast endpoint too', () => {
    const subject = { ...base(), subject: 'S'.repeat(1024 * 1024) };
    const variables = {
      ...base(),
      recipients: [{ address: 'bob@example.com', variables: { v: 'x'.repeat(10_000_000) } }],
    };
    const many = {
      ...base(),
      recipients: [
        {
          address: 'b@example.com',
          variables: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`v${i}`, i])),
        },
      ],
    };
    for (const parse of [parseSendRequest, parseBroadcastRequest] as const) {
      expect(issuePaths(() => parse(subject))).toContainEqual(['subject']);
      expect(issuePaths(() => parse(variables))).toContainEqual(['recipients', 0, 'variables']);
      expect(issuePaths(() => parse(many))).toContainEqual(['recipients', 0, 'variables']);
    }
  });

  it('documents the caps in the JSON Schema the OpenAPI document is built from', () => {
    const schema = JSON.stringify(z.toJSONSchema(sendRequestSchema, { io: 'input', unrepresentable: 'any' }));
    const doc = JSON.parse(schema) as {
      properties: Record<string, { anyOf?: Array<Record<string, unknown>> }>;
    };
    const subject = doc.properties.subject?.anyOf?.find((s) => s.type === 'string');
    expect(subject?.maxLength).toBe(FIELD_LIMITS.subject.max);
    const message = doc.properties.message?.anyOf?.find((s) => s.type === 'string');
    expect(message?.maxLength).toBe(FIELD_LIMITS.message.max);
    expect(schema).toContain(`"maxProperties":${FIELD_LIMITS.variableKeys.max}`);
  });

  it('lists every cap in the README table with its value', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    for (const [name, limit] of Object.entries(FIELD_LIMITS)) {
      // Cells may be padded (the table is formatted).
      const row = new RegExp(
        `\\|\\s*\`${name}\`\\s*\\|\\s*${limit.max.toLocaleString('en-US')} ${limit.unit}\\s*\\|`,
      );
      expect(readme, name).toMatch(row);
    }
  });
});
