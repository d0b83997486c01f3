import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MailroomError } from '../src/base/errors.js';
import { checkAddress, checkAddressFully } from '../src/request/address.js';
import { fastRecipients } from '../src/request/fast-recipients.js';
import { parseBroadcastRequest, parseSendRequest } from '../src/request/index.js';
import { toValidationIssues } from '../src/request/issues.js';
import {
  normalizeBatchRequest,
  normalizeBroadcastRequest,
  normalizeSendRequest,
} from '../src/request/normalize.js';
import {
  createBatchRequestSchema,
  createBroadcastRequestSchema,
  createSendRequestSchema,
} from '../src/request/schemas.js';

const schemas = {
  send: createSendRequestSchema(10),
  batch: createBatchRequestSchema(250),
  broadcast: createBroadcastRequestSchema(250),
};
let accepted = 0;

/** What the parsers answered before the fast path: the schemas on the whole body, then normalize. */
function reference(kind: 'send' | 'broadcast' | 'batch', body: Record<string, unknown>): unknown {
  const result = schemas[kind].safeParse(body, {
    error: (issue: { code: string; input?: unknown }) =>
      issue.code === 'invalid_type' && issue.input === undefined ? 'Required' : undefined,
  });
  if (!result.success) return { issues: toValidationIssues(result.error.issues) };
  accepted++;
  if (kind === 'send') return normalizeSendRequest(result.data as Parameters<typeof normalizeSendRequest>[0]);
  if (kind === 'batch')
    return {
      kind,
      request: normalizeBatchRequest(result.data as Parameters<typeof normalizeBatchRequest>[0]),
    };
  return {
    kind: 'initial',
    request: normalizeBroadcastRequest(result.data as Parameters<typeof normalizeBroadcastRequest>[0]),
  };
}

function actual(kind: 'send' | 'broadcast' | 'batch', body: Record<string, unknown>): unknown {
  try {
    return kind === 'send' ? parseSendRequest(body) : parseBroadcastRequest(body);
  } catch (error) {
    if (error instanceof MailroomError && error.code === 'VALIDATION_FAILED') return { issues: error.issues };
    throw error;
  }
}

const goodLocal = fc.constantFrom('ann', 'Bob.Lee', 'a+b', 'ü', ' x');
const badLocal = fc.constantFrom('a..b', '.a', '', 'a b', 'a"b', 'x\n');
const goodDomain = fc.constantFrom('example.com', 'Example.COM', 'ex-ample.co');
const badDomain = fc.constantFrom('localhost', 'a..b', '-a.com', 'x.123');
const rare = <T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: good, weight: 60 }, { arbitrary: bad, weight: 1 });
const address = fc.oneof(
  { arbitrary: fc.tuple(goodLocal, goodDomain).map(([l, d]) => `${l}@${d}`), weight: 60 },
  { arbitrary: fc.tuple(badLocal, goodDomain).map(([l, d]) => `${l}@${d}`), weight: 1 },
  { arbitrary: fc.tuple(goodLocal, badDomain).map(([l, d]) => `${l}@${d}`), weight: 1 },
  { arbitrary: fc.constantFrom('no-at', '@x.com', 'a@b@c.com', '<a@b.com>', ' a@b.com\t'), weight: 1 },
);
const name = rare(
  fc.constantFrom(undefined, null, 'Ann', '  Ann Lee ', '', '   '),
  fc.constantFrom('x\ny', 'a\u2028b', 7, true),
);
const variables = rare(
  fc.oneof(
    fc.constant(undefined),
    fc.constant(null),
    fc.dictionary(
      fc.constantFrom('a', 'b', '__proto__', 'code'),
      fc.oneof(
        fc.string(),
        fc.integer(),
        fc.constant(null),
        fc.constant([1, 'x']),
        fc.constant({ n: { m: 1 } }),
      ),
    ),
    fc.constant(Object.assign(Object.create(null), { k: 'v' })),
  ),
  fc.constantFrom('str', 5, [1, 2], new Date(0), { a: Number.NaN }, { a: () => 1 }, { a: undefined }),
);
const recipient = fc.oneof(
  { arbitrary: address, weight: 20 },
  {
    arbitrary: fc
      .tuple(fc.constantFrom('Ann', '"Ann \\"A\\" Lee"', '', ' Bob '), address)
      .map(([n, a]) => `${n} <${a}>`),
    weight: 20,
  },
  { arbitrary: fc.record({ address, name, variables }, { requiredKeys: ['address'] }), weight: 40 },
  {
    arbitrary: fc.constantFrom(null, 5, [], { name: 'no address' }, { address: 7 }, 'x\ny <a@b.com>'),
    weight: 1,
  },
);

describe('recipients checked without zod', () => {
  it('answers exactly as the schemas would, for lists of any mix of good and bad entries', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('send' as const, 'broadcast' as const, 'batch' as const),
        fc.array(recipient, { maxLength: 12 }),
        (kind, recipients) => {
          const body: Record<string, unknown> =
            kind === 'batch'
              ? { broadcastRef: 'bc_1', recipients }
              : { subject: 'Hi', sender: 'news@example.com', message: 'Hello', recipients };
          expect(actual(kind, body)).toEqual(reference(kind, body));
        },
      ),
      { numRuns: 2000 },
    );
    // The generator must reach both sides: accepted lists (the fast path's answers) and refused ones.
    expect(accepted).toBeGreaterThan(200);
    expect(accepted).toBeLessThan(1800);
  });

  it('leaves unusual shapes to the schemas', () => {
    class Recipient {
      address = 'a@example.com';
    }
    const symbolic = { [Symbol('s')]: 1, a: 'x' };
    const throwing = {
      get address(): string {
        throw new Error('no');
      },
    };
    for (const list of [
      [new Recipient()],
      [{ address: 'a@example.com', variables: symbolic }],
      [throwing],
      // biome-ignore lint/suspicious/noSparseArray: a hole is what is tested
      [, 'a@example.com'],
      'a@example.com',
      [],
    ]) {
      expect(fastRecipients(list, 1)).toBeUndefined();
    }
    expect(fastRecipients([], 0)).toEqual([]);
  });

  it('collapses duplicates by normalized address to their first occurrence', () => {
    expect(
      fastRecipients(
        ['Ann <a@EXAMPLE.com>', { address: 'a@example.com', name: 'Other' }, 'b@example.com'],
        0,
      ),
    ).toEqual([
      { address: 'a@example.com', name: 'Ann', nameGiven: true, variables: {} },
      { address: 'b@example.com', name: 'b', nameGiven: false, variables: {} },
    ]);
  });
});

describe('the fast address scan', () => {
  it('answers as the rule-by-rule check on any string of address-like characters', () => {
    const chars = fc.constantFrom(
      ...'aZz09-_.@@..+\'"(),:;<>[]\\ \t\n\r\0\u00e9\u0085\u2028'.split(''),
      'ü',
      'Ω',
      '\u007f',
    );
    const text = fc.array(chars, { maxLength: 24 }).map((a) => a.join(''));
    const shaped = fc
      .tuple(text, fc.constantFrom('@', '@x.', '.co', '@Ex-a.Mple', '@1.2'), text)
      .map(([a, b, c]) => a + b + c);
    const part = (alphabet: string, max: number) =>
      fc.array(fc.constantFrom(...alphabet.split('')), { maxLength: max }).map((a) => a.join(''));
    const likely = fc
      .tuple(part('ab.+-', 6), part('aB1-.', 10))
      .map(([local, domain]) => `${local}@${domain}`);
    fc.assert(
      fc.property(fc.oneof(text, shaped, likely), (input) => {
        expect(checkAddress(input)).toEqual(checkAddressFully(input));
      }),
      { numRuns: 20_000 },
    );
  });

  it('applies the length limits at their edges', () => {
    const label = 'a'.repeat(63);
    for (const input of [
      `${'l'.repeat(64)}@example.com`,
      `${'l'.repeat(65)}@example.com`,
      `a@${label}.com`,
      `a@${label}a.com`,
      `a@${[label, label, label].join('.')}.${'b'.repeat(57)}`,
      `a@${[label, label, label].join('.')}.${'b'.repeat(58)}`,
      'a@b.c0',
      'a@b.00',
      'a@B-1.C',
    ]) {
      expect(checkAddress(input)).toEqual(checkAddressFully(input));
    }
  });
});
