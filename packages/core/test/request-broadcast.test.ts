import { describe, expect, it } from 'vitest';
import type { ValidationIssue } from '../src/base/errors.js';
import { MailroomError } from '../src/base/errors.js';
import { parseBroadcastRequest } from '../src/request/index.js';
import type { BatchRequest, BroadcastRequest } from '../src/request/request-types.js';

const content = {
  subject: 'News for {{profile.firstName}}',
  sender: 'News <news@example.com>',
  template: { ref: 'monthly', variables: { month: 'May' } },
};

function issuesOf(run: () => unknown): ValidationIssue[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(MailroomError);
    const failure = error as MailroomError;
    expect(failure.code).toBe('VALIDATION_FAILED');
    return failure.issues ?? [];
  }
  throw new Error('expected a VALIDATION_FAILED error');
}

function expectIssue(body: unknown, path: Array<string | number>, rule?: string, limit?: number) {
  const issues = issuesOf(() =>
    parseBroadcastRequest(body, limit === undefined ? {} : { recipientsPerBatch: limit }),
  );
  const issue = issues.find((candidate) => JSON.stringify(candidate.path) === JSON.stringify(path));
  expect(issue, `no issue at ${JSON.stringify(path)} in ${JSON.stringify(issues)}`).toBeDefined();
  if (rule) expect(issue?.message).toContain(rule);
  return issues;
}

function initial(body: Record<string, unknown>): BroadcastRequest {
  const parsed = parseBroadcastRequest(body);
  if (parsed.kind !== 'initial') throw new Error(`expected an initial batch, got ${parsed.kind}`);
  return parsed.request;
}

function batch(body: Record<string, unknown>): BatchRequest {
  const parsed = parseBroadcastRequest(body);
  if (parsed.kind !== 'batch') throw new Error(`expected a later batch, got ${parsed.kind}`);
  return parsed.request;
}

const addresses = (n: number) => Array.from({ length: n }, (_, i) => `user${i}@example.com`);

describe('initial batch', () => {
  it('normalizes a complete initial batch', () => {
    expect(
      initial({
        ...content,
        recipients: [{ address: 'Ann@Example.com', name: 'Ann', variables: { firstName: 'Ann' } }],
        options: {
          acquiringAudience: 'customers',
          scheduleFor: '2025-12-25T10:00:00.000Z',
          storeContent: false,
        },
      }),
    ).toEqual({
      subject: 'News for {{profile.firstName}}',
      preheader: null,
      sender: { address: 'news@example.com', name: 'News' },
      message: null,
      template: { ref: 'monthly', variables: { month: 'May' } },
      replyAddress: null,
      attachments: [],
      invitation: null,
      recipients: [
        { address: 'Ann@example.com', name: 'Ann', nameGiven: true, variables: { firstName: 'Ann' } },
      ],
      sources: [],
      options: {
        acquiringAudience: 'customers',
        scheduleFor: new Date('2025-12-25T10:00:00.000Z'),
        storeContent: false,
        plan: null,
        topic: null,
      },
    });
  });

  it('defaults the options to null', () => {
    expect(initial({ ...content, recipients: 'a@example.com' }).options).toEqual({
      acquiringAudience: null,
      scheduleFor: null,
      storeContent: null,
      plan: null,
      topic: null,
    });
    expect(
      initial({ ...content, recipients: 'a@example.com', options: { storeContent: true } }).options
        .storeContent,
    ).toBe(true);
  });

  it('applies the content rules of a single message', () => {
    const { template: _omit, ...noBody } = content;
    expectIssue({ ...noBody, recipients: 'a@example.com' }, ['message'], 'Either message or template');
    expectIssue({ ...content, message: 'Hi', recipients: 'a@example.com' }, ['template'], 'not both');
    expectIssue({ ...content, subject: 'x\ny', recipients: 'a@example.com' }, ['subject'], 'line breaks');
    expectIssue({ ...content, sender: undefined, recipients: 'a@example.com' }, ['sender'], 'Required');
  });

  it('requires recipients or sources, at least one of them non-empty', () => {
    expectIssue(content, ['recipients'], 'recipients or sources');
    expectIssue({ ...content, recipients: [], sources: [] }, ['recipients'], 'recipients or sources');
    expectIssue({ ...content, recipients: null, audience: [] }, ['recipients'], 'recipients or sources');
    expect(initial({ ...content, sources: [{ config: { ref: 'vip' } }] }).recipients).toEqual([]);
  });

  it('takes at most 250 recipients per batch, counted as sent, and the limit is configurable', () => {
    expect(initial({ ...content, recipients: addresses(250) }).recipients).toHaveLength(250);
    expectIssue(
      { ...content, recipients: addresses(251) },
      ['recipients'],
      'At most 250 recipients per batch',
    );
    expectIssue(
      { ...content, recipients: Array.from({ length: 251 }, () => 'same@example.com') },
      ['recipients'],
      'At most 250',
    );
    expectIssue(
      { ...content, recipients: addresses(6) },
      ['recipients'],
      'At most 5 recipients per batch',
      5,
    );
  });

  it('collapses duplicate recipients', () => {
    const request = initial({
      ...content,
      recipients: ['a@example.com', 'a@EXAMPLE.com', 'A <a@example.COM>'],
    });
    expect(request.recipients).toEqual([
      { address: 'a@example.com', name: 'a', nameGiven: false, variables: {} },
    ]);
  });
});

describe('options.scheduleFor', () => {
  it.each([
    ['2025-12-25T10:00:00.000Z', '2025-12-25T10:00:00.000Z'],
    ['2025-12-25T10:00:00Z', '2025-12-25T10:00:00.000Z'],
    ['2025-12-25T10:00Z', '2025-12-25T10:00:00.000Z'],
    ['2025-12-25T11:00:00+01:00', '2025-12-25T10:00:00.000Z'],
    ['2025-12-25T05:30:00-0430', '2025-12-25T10:00:00.000Z'],
    ['2025-12-25T10:00:00.123456789Z', '2025-12-25T10:00:00.123Z'],
    ['2024-02-29T00:00:00z', '2024-02-29T00:00:00.000Z'],
  ])('accepts %s', (scheduleFor, iso) => {
    const request = initial({ ...content, recipients: 'a@example.com', options: { scheduleFor } });
    expect(request.options.scheduleFor?.toISOString()).toBe(iso);
  });

  it('treats null and absent as now (null)', () => {
    for (const options of [{}, { scheduleFor: null }, undefined, null]) {
      expect(initial({ ...content, recipients: 'a@example.com', options }).options.scheduleFor).toBeNull();
    }
  });

  it.each([
    '2025-12-25',
    '2025-12-25T10:00:00',
    '2025-12-25 10:00:00Z',
    'tomorrow',
    '',
    '2025-02-30T10:00:00Z',
    '2025-02-29T10:00:00Z',
    '2025-12-25T24:00:00Z',
    '2025-12-25T10:00:00+25:00',
    '12/25/2025 10:00',
    'Thu, 25 Dec 2025 10:00:00 GMT',
    1766656800000,
    true,
    { date: '2025-12-25T10:00:00Z' },
  ])('refuses %j at options.scheduleFor', (scheduleFor) => {
    expectIssue({ ...content, recipients: 'a@example.com', options: { scheduleFor } }, [
      'options',
      'scheduleFor',
    ]);
  });

  it('says which forms are accepted', () => {
    expectIssue(
      { ...content, recipients: 'a@example.com', options: { scheduleFor: 'soon' } },
      ['options', 'scheduleFor'],
      'ISO-8601 date-time with Z or an offset',
    );
  });

  it('refuses a non-boolean storeContent', () => {
    expectIssue({ ...content, recipients: 'a@example.com', options: { storeContent: 'yes' } }, [
      'options',
      'storeContent',
    ]);
  });
});

describe('sources', () => {
  it('accepts the Dart CSV source', () => {
    const request = initial({
      ...content,
      sources: [
        {
          type: 'CSV',
          config: {
            label: 'spring-import',
            url: 'https://bucket.s3.amazonaws.com/list.csv',
            columnMappings: { Email: 'address', 'First Name': 'firstName' },
          },
        },
      ],
    });
    expect(request.sources).toEqual([
      {
        kind: 'csv',
        topic: null,
        label: 'spring-import',
        url: 'https://bucket.s3.amazonaws.com/list.csv',
        columnMappings: { Email: 'address', 'First Name': 'firstName' },
      },
    ]);
  });

  it('accepts the Dart audience source with all four keys', () => {
    const request = initial({
      ...content,
      sources: [
        {
          config: {
            ref: 'vip',
            actionOnExistingTrait: 'override',
            actionOnExistingProfile: 'override',
            includeUnsubscribed: true,
          },
        },
      ],
    });
    expect(request.sources).toEqual([
      {
        kind: 'audience',
        topic: null,
        ref: 'vip',
        actionOnExistingTrait: 'override',
        actionOnExistingProfile: 'override',
        includeUnsubscribed: true,
      },
    ]);
  });

  it('applies the audience defaults and accepts the type in any case', () => {
    const defaults = {
      kind: 'audience',
      topic: null,
      ref: 'vip',
      actionOnExistingTrait: 'preserve',
      actionOnExistingProfile: 'preserve',
      includeUnsubscribed: false,
    };
    for (const type of [
      undefined,
      null,
      'AUDIENCE',
      'audience',
      'AUDIENCE_GROUP',
      'audience-group',
      'Audience Group',
    ]) {
      expect(initial({ ...content, sources: [{ type, config: { ref: 'vip' } }] }).sources).toEqual([
        defaults,
      ]);
    }
    expect(
      initial({
        ...content,
        sources: [
          {
            config: {
              ref: 'vip',
              actionOnExistingTrait: null,
              actionOnExistingProfile: null,
              includeUnsubscribed: null,
            },
          },
        ],
      }).sources,
    ).toEqual([defaults]);
  });

  it('accepts the flat spec shape', () => {
    const request = initial({
      ...content,
      sources: [
        { ref: 'vip', includeUnsubscribed: true },
        { label: 'import', url: 'https://files.example.com/a.csv' },
        { type: 'csv', label: 'no-url' },
      ],
    });
    expect(request.sources).toEqual([
      {
        kind: 'audience',
        topic: null,
        ref: 'vip',
        actionOnExistingTrait: 'preserve',
        actionOnExistingProfile: 'preserve',
        includeUnsubscribed: true,
      },
      {
        kind: 'csv',
        label: 'import',
        url: 'https://files.example.com/a.csv',
        columnMappings: {},
        topic: null,
      },
      { kind: 'csv', label: 'no-url', url: null, columnMappings: {}, topic: null },
    ]);
  });

  it("turns the TypeScript client's top-level audience list into audience sources with defaults", () => {
    const request = initial({
      ...content,
      audience: ['vip', 'beta'],
      sources: [{ config: { ref: 'staff' } }],
    });
    expect(request.sources.map((source) => (source.kind === 'audience' ? source.ref : source.label))).toEqual(
      ['staff', 'vip', 'beta'],
    );
    expect(request.sources[1]).toEqual({
      kind: 'audience',
      topic: null,
      ref: 'vip',
      actionOnExistingTrait: 'preserve',
      actionOnExistingProfile: 'preserve',
      includeUnsubscribed: false,
    });
  });

  it.each([
    [[{ type: 'SQL', config: { ref: 'x' } }], ['sources', 0, 'type'], 'Unsupported source type'],
    [
      [{ type: 'CSV', config: { url: 'https://x.example.com/a.csv' } }],
      ['sources', 0, 'config', 'label'],
      'label',
    ],
    [[{ type: 'CSV', config: { label: '  ' } }], ['sources', 0, 'config', 'label'], 'label'],
    [[{ type: 'csv' }], ['sources', 0, 'label'], 'label'],
    [
      [{ type: 'CSV', config: { label: 'l', url: 'ftp://x.example.com/a.csv' } }],
      ['sources', 0, 'config', 'url'],
      'http',
    ],
    [
      [{ type: 'CSV', config: { label: 'l', columnMappings: { Email: 5 } } }],
      ['sources', 0, 'config', 'columnMappings', 'Email'],
    ],
    [
      [{ type: 'CSV', config: { label: 'l', columnMappings: ['Email'] } }],
      ['sources', 0, 'config', 'columnMappings'],
    ],
    [[{ config: {} }], ['sources', 0, 'config', 'ref'], 'ref'],
    [[{}], ['sources', 0, 'ref'], 'ref'],
    [
      [{ config: { ref: 'g', actionOnExistingTrait: 'keep' } }],
      ['sources', 0, 'config', 'actionOnExistingTrait'],
      'preserve',
    ],
    [
      [{ config: { ref: 'g', actionOnExistingProfile: 'OVERWRITE' } }],
      ['sources', 0, 'config', 'actionOnExistingProfile'],
    ],
    [[{ config: { ref: 'g', includeUnsubscribed: 'yes' } }], ['sources', 0, 'config', 'includeUnsubscribed']],
    [[{ ref: 'g', actionOnExistingTrait: 'keep' }], ['sources', 0, 'actionOnExistingTrait'], 'override'],
    [['vip'], ['sources', 0]],
    [{ ref: 'vip' }, ['sources']],
  ])('refuses %j', (sources, path, rule?: string) => {
    expectIssue({ ...content, sources }, path, rule);
  });

  it('refuses a bad audience list', () => {
    expectIssue({ ...content, audience: 'vip' }, ['audience']);
    expectIssue({ ...content, audience: ['vip', ''] }, ['audience', 1], 'empty');
  });
});

describe('later batch (broadcastRef)', () => {
  it('accepts recipients, sources and audience refs', () => {
    expect(batch({ broadcastRef: 'bc_1', recipients: ['a@example.com', 'a@EXAMPLE.com'] })).toEqual({
      broadcastRef: 'bc_1',
      recipients: [{ address: 'a@example.com', name: 'a', nameGiven: false, variables: {} }],
      sources: [],
    });
    expect(
      batch({ broadcastRef: 'bc_1', sources: [{ type: 'CSV', config: { label: 'more' } }] }).sources,
    ).toEqual([{ kind: 'csv', label: 'more', url: null, columnMappings: {}, topic: null }]);
    expect(batch({ broadcastRef: 'bc_1', audience: ['vip'] }).sources).toHaveLength(1);
  });

  it('lets null content fields through (a serializer may send them) and ignores unknown keys', () => {
    const request = batch({
      broadcastRef: 'bc_1',
      recipients: 'a@example.com',
      subject: null,
      template: null,
      x: 1,
    });
    expect(Object.keys(request).sort()).toEqual(['broadcastRef', 'recipients', 'sources']);
  });

  it('requires recipients or sources', () => {
    expectIssue({ broadcastRef: 'bc_1' }, ['recipients'], 'recipients or sources');
    expectIssue(
      { broadcastRef: 'bc_1', recipients: [], sources: [] },
      ['recipients'],
      'recipients or sources',
    );
  });

  it('takes at most 250 recipients', () => {
    expect(batch({ broadcastRef: 'bc_1', recipients: addresses(250) }).recipients).toHaveLength(250);
    expectIssue(
      { broadcastRef: 'bc_1', recipients: addresses(251) },
      ['recipients'],
      'At most 250 recipients per batch',
    );
  });

  it.each([
    ['subject', 'New subject'],
    ['sender', 'other@example.com'],
    ['message', 'Hi'],
    ['template', { ref: 'other' }],
    ['preheader', 'x'],
    ['replyAddress', 'r@example.com'],
    ['attachments', []],
    ['invitation', { title: 't', startDate: '2025-01-01', endDate: '2025-01-01' }],
    ['options', { scheduleFor: '2025-12-25T10:00:00Z' }],
  ])('refuses %s: a batch cannot change it', (field, value) => {
    expectIssue(
      { broadcastRef: 'bc_1', recipients: 'a@example.com', [field]: value },
      [field],
      `A batch cannot change ${field}`,
    );
  });

  it('validates the broadcastRef', () => {
    expectIssue({ broadcastRef: '', recipients: 'a@example.com' }, ['broadcastRef'], 'empty');
    expectIssue({ broadcastRef: 42, recipients: 'a@example.com' }, ['broadcastRef'], 'expected string');
  });

  it('is an initial batch when broadcastRef is null or absent', () => {
    expect(parseBroadcastRequest({ ...content, broadcastRef: null, recipients: 'a@example.com' }).kind).toBe(
      'initial',
    );
  });
});
