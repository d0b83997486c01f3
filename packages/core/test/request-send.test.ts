import { describe, expect, it } from 'vitest';
import type { ValidationIssue } from '../src/base/errors.js';
import { MailroomError } from '../src/base/errors.js';
import { parseSendRequest } from '../src/request/index.js';

const base = {
  subject: 'Hello {{recipient.firstName}}',
  sender: { address: 'news@example.com', name: 'News' },
  message: '<p>Hi</p>',
  recipients: [{ address: 'ann@example.com', name: 'Ann' }],
};

function issuesOf(run: () => unknown): ValidationIssue[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(MailroomError);
    const failure = error as MailroomError;
    expect(failure.code).toBe('VALIDATION_FAILED');
    expect(failure.status).toBe(400);
    return failure.issues ?? [];
  }
  throw new Error('expected a VALIDATION_FAILED error');
}

/** Asserts the body is refused with an issue at `path` whose message contains `rule`. */
function expectIssue(body: unknown, path: Array<string | number>, rule?: string, limit?: number) {
  const issues = issuesOf(() =>
    parseSendRequest(body, limit === undefined ? {} : { recipientsPerMessage: limit }),
  );
  const issue = issues.find((candidate) => JSON.stringify(candidate.path) === JSON.stringify(path));
  expect(issue, `no issue at ${JSON.stringify(path)} in ${JSON.stringify(issues)}`).toBeDefined();
  if (rule) expect(issue?.message).toContain(rule);
  return issues;
}

describe('parseSendRequest: the normalized shape', () => {
  it('normalizes a complete request', () => {
    const request = parseSendRequest({
      ...base,
      preheader: 'Preview',
      replyAddress: 'Replies@Example.COM',
      options: { acquiringAudience: 'newsletter' },
    });
    expect(request).toEqual({
      subject: 'Hello {{recipient.firstName}}',
      preheader: 'Preview',
      sender: { address: 'news@example.com', name: 'News' },
      message: '<p>Hi</p>',
      template: null,
      replyAddress: 'Replies@example.com',
      attachments: [],
      invitation: null,
      recipients: [{ address: 'ann@example.com', name: 'Ann', nameGiven: true, variables: {} }],
      options: { acquiringAudience: 'newsletter', topic: null },
    });
  });

  it('treats null optional fields as absent (the Dart client sends them)', () => {
    const request = parseSendRequest({
      ...base,
      preheader: null,
      template: null,
      replyAddress: null,
      attachments: null,
      invitation: null,
      options: null,
      sender: { address: 'news@example.com', name: null },
    });
    expect(request.preheader).toBeNull();
    expect(request.template).toBeNull();
    expect(request.replyAddress).toBeNull();
    expect(request.attachments).toEqual([]);
    expect(request.sender.name).toBeNull();
    expect(request.options).toEqual({ acquiringAudience: null, topic: null });
  });

  it('ignores unknown top-level keys and never lets them reach the output', () => {
    const request = parseSendRequest({ ...base, cc: ['x@example.com'], tags: ['a'], extra: { deep: 1 } });
    expect(Object.keys(request).sort()).toEqual(
      [
        'attachments',
        'invitation',
        'message',
        'options',
        'preheader',
        'recipients',
        'replyAddress',
        'sender',
        'subject',
        'template',
      ].sort(),
    );
    const nested = parseSendRequest({
      ...base,
      sender: { address: 'news@example.com', role: 'admin' },
      recipients: [{ address: 'ann@example.com', admin: true }],
      options: { acquiringAudience: 'g', scheduleFor: '2025-01-01T00:00:00Z' },
    });
    expect(nested.sender).toEqual({ address: 'news@example.com', name: null });
    expect(Object.keys(nested.recipients[0] ?? {}).sort()).toEqual([
      'address',
      'name',
      'nameGiven',
      'variables',
    ]);
    expect(nested.options).toEqual({ acquiringAudience: 'g', topic: null });
  });

  it('replaces line breaks in the preheader with spaces, and a blank preheader is null', () => {
    expect(parseSendRequest({ ...base, preheader: 'Line one\r\nLine two' }).preheader).toBe(
      'Line one Line two',
    );
    expect(parseSendRequest({ ...base, preheader: '   ' }).preheader).toBeNull();
  });
});

describe('sender', () => {
  it.each([
    ['news@Example.com', { address: 'news@example.com', name: null }],
    ['News Team <news@Example.com>', { address: 'news@example.com', name: 'News Team' }],
    ['"Team, News" <news@example.com>', { address: 'news@example.com', name: 'Team, News' }],
    [{ address: 'news@Example.com' }, { address: 'news@example.com', name: null }],
    [
      { address: 'news@example.com', name: '  ' },
      { address: 'news@example.com', name: null },
    ],
    [
      { address: 'news@example.com', name: ' News ' },
      { address: 'news@example.com', name: 'News' },
    ],
  ])('accepts %j', (sender, expected) => {
    expect(parseSendRequest({ ...base, sender }).sender).toEqual(expected);
  });

  it('is required', () => {
    const { sender: _omit, ...body } = base;
    expectIssue(body, ['sender'], 'Required');
  });

  it.each([
    ['not-an-address', ['sender'], '@'],
    ['News <not-an-address>', ['sender'], '@'],
    ['News\r\nBcc: x@evil.com <news@example.com>', ['sender'], 'line breaks'],
    [{ address: 'bad' }, ['sender', 'address'], '@'],
    [{ name: 'News' }, ['sender', 'address'], 'Required'],
    [{ address: 'news@example.com', name: 'News\r\nBcc: x@evil.com' }, ['sender', 'name'], 'line breaks'],
    [{ address: 'news@example.com', name: 'News\0' }, ['sender', 'name'], 'NUL'],
    [42, ['sender'], 'Expected an address string'],
    [['news@example.com'], ['sender'], 'Expected an address string'],
  ])('refuses %j', (sender, path, rule) => {
    expectIssue({ ...base, sender }, path, rule);
  });
});

describe('subject', () => {
  it('is required and non-empty', () => {
    const { subject: _omit, ...body } = base;
    expectIssue(body, ['subject'], 'Required');
    expectIssue({ ...base, subject: '' }, ['subject'], 'empty');
    expectIssue({ ...base, subject: '   ' }, ['subject'], 'empty');
    expectIssue({ ...base, subject: 7 }, ['subject'], 'expected string');
  });

  it('refuses CR, LF and NUL rather than stripping them', () => {
    expectIssue({ ...base, subject: 'Hi\r\nBcc: x@evil.com' }, ['subject'], 'line breaks');
    expectIssue({ ...base, subject: 'Hi\nthere' }, ['subject'], 'line breaks');
    expectIssue({ ...base, subject: 'Hi\0' }, ['subject'], 'NUL');
  });
});

describe('message or template', () => {
  it('requires one of them', () => {
    const { message: _omit, ...body } = base;
    expectIssue(body, ['message'], 'Either message or template is required');
    expectIssue({ ...body, message: null, template: null }, ['message'], 'Either message or template');
  });

  it('refuses both', () => {
    expectIssue({ ...base, template: { ref: 'welcome' } }, ['template'], 'not both');
  });

  it('refuses an empty message', () => {
    expectIssue({ ...base, message: '' }, ['message'], 'empty');
  });

  it('accepts template.ref with variables, and template.id from older clients', () => {
    const { message: _omit, ...body } = base;
    expect(
      parseSendRequest({ ...body, template: { ref: 'welcome', variables: { plan: 'pro', n: 2 } } }),
    ).toMatchObject({ message: null, template: { ref: 'welcome', variables: { plan: 'pro', n: 2 } } });
    expect(parseSendRequest({ ...body, template: { id: 'legacy' } }).template).toEqual({
      ref: 'legacy',
      variables: {},
    });
    expect(parseSendRequest({ ...body, template: { ref: 'new', id: 'old' } }).template?.ref).toBe('new');
  });

  it('requires a template ref', () => {
    const { message: _omit, ...body } = base;
    expectIssue({ ...body, template: {} }, ['template', 'ref'], 'Required');
    expectIssue({ ...body, template: { ref: ' ' } }, ['template', 'ref'], 'empty');
    expectIssue({ ...body, template: { ref: 'x', variables: [1] } }, ['template', 'variables']);
    expectIssue({ ...body, template: 'welcome' }, ['template']);
  });
});

describe('recipients', () => {
  it('accepts a bare string, an array of strings, a single object and a list of objects', () => {
    expect(parseSendRequest({ ...base, recipients: 'Ann@Example.com' }).recipients).toEqual([
      { address: 'Ann@example.com', name: 'Ann', nameGiven: false, variables: {} },
    ]);
    expect(
      parseSendRequest({ ...base, recipients: ['ann@example.com', 'Bob <bob@example.com>'] }).recipients,
    ).toEqual([
      { address: 'ann@example.com', name: 'ann', nameGiven: false, variables: {} },
      { address: 'bob@example.com', name: 'Bob', nameGiven: true, variables: {} },
    ]);
    expect(
      parseSendRequest({
        ...base,
        recipients: { address: 'ann@example.com', variables: { code: 'X1', n: 3 } },
      }).recipients,
    ).toEqual([
      { address: 'ann@example.com', name: 'ann', nameGiven: false, variables: { code: 'X1', n: 3 } },
    ]);
    expect(
      parseSendRequest({
        ...base,
        recipients: [
          { address: 'ann@example.com', name: 'Ann', variables: { nested: { a: [1, 'b', null, true] } } },
          'carl@example.com',
        ],
      }).recipients,
    ).toEqual([
      {
        address: 'ann@example.com',
        name: 'Ann',
        nameGiven: true,
        variables: { nested: { a: [1, 'b', null, true] } },
      },
      { address: 'carl@example.com', name: 'carl', nameGiven: false, variables: {} },
    ]);
  });

  it('collapses duplicates by normalized address (domain case-insensitive), keeping the first', () => {
    const recipients = parseSendRequest({
      ...base,
      recipients: [
        { address: 'ann@example.com', name: 'First' },
        { address: 'ann@EXAMPLE.COM', name: 'Second' },
        'Third <ann@Example.Com>',
        { address: 'Ann@example.com', name: 'Other local part' },
      ],
    }).recipients;
    expect(recipients.map((r) => [r.address, r.name])).toEqual([
      ['ann@example.com', 'First'],
      ['Ann@example.com', 'Other local part'],
    ]);
  });

  it('is required, with 1 to 10 recipients', () => {
    const { recipients: _omit, ...body } = base;
    expectIssue(body, ['recipients'], 'Required');
    expectIssue({ ...base, recipients: [] }, ['recipients'], 'At least one recipient');
    const eleven = Array.from({ length: 11 }, (_, i) => `r${i}@example.com`);
    expectIssue({ ...base, recipients: eleven }, ['recipients'], 'At most 10 recipients per request');
    expect(parseSendRequest({ ...base, recipients: eleven.slice(0, 10) }).recipients).toHaveLength(10);
  });

  it('counts the list as sent, before duplicates collapse', () => {
    const same = Array.from({ length: 11 }, () => 'ann@example.com');
    expectIssue({ ...base, recipients: same }, ['recipients'], 'At most 10');
  });

  it('takes the limit from the caller', () => {
    const three = ['a@example.com', 'b@example.com', 'c@example.com'];
    expectIssue({ ...base, recipients: three }, ['recipients'], 'At most 2 recipients per request', 2);
    expect(
      parseSendRequest({ ...base, recipients: three }, { recipientsPerMessage: 3 }).recipients,
    ).toHaveLength(3);
    expect(() => parseSendRequest(base, { recipientsPerMessage: 0 })).toThrow(MailroomError);
  });

  it.each<[unknown, Array<string | number>, string?]>([
    [['ann@example.com', 'bad'], ['recipients', 1], '@'],
    [[{ address: 'ann@example.com' }, { address: 'bob@localhost' }], ['recipients', 1, 'address'], 'dot'],
    [[{ address: 5 }], ['recipients', 0, 'address'], 'expected string'],
    [[{ name: 'Ann' }], ['recipients', 0, 'address'], 'Required'],
    [
      [{ address: 'a@example.com', name: 'Ann\r\nBcc: x@evil.com' }],
      ['recipients', 0, 'name'],
      'line breaks',
    ],
    [[{ address: 'a@example.com', variables: 'x' }], ['recipients', 0, 'variables']],
    [
      [{ address: 'a@example.com', variables: { a: { b: Number.NaN } } }],
      ['recipients', 0, 'variables', 'a', 'b'],
    ],
    [[42], ['recipients', 0], 'Expected an address string'],
    [42, ['recipients'], 'Expected an address string'],
    ['bad', ['recipients'], '@'],
    [{ address: 'bad' }, ['recipients', 'address'], '@'],
  ])('refuses %j', (recipients, path, rule) => {
    expectIssue({ ...base, recipients }, path, rule);
  });
});

describe('replyAddress and options', () => {
  it('validates replyAddress as a bare address', () => {
    expectIssue({ ...base, replyAddress: 'nope' }, ['replyAddress'], '@');
    expectIssue({ ...base, replyAddress: 'a@b.co\r\nBcc: x@y.co' }, ['replyAddress'], 'CR, LF');
  });

  it('validates options.acquiringAudience', () => {
    expectIssue({ ...base, options: { acquiringAudience: '' } }, ['options', 'acquiringAudience'], 'empty');
    expectIssue({ ...base, options: { acquiringAudience: 3 } }, ['options', 'acquiringAudience']);
    expectIssue({ ...base, options: 'x' }, ['options']);
  });
});

describe('invitation', () => {
  const invitation = {
    title: 'Launch call',
    startDate: '2025-12-25T10:00:00.000Z',
    endDate: '2025-12-25T11:00:00+00:00',
  };

  it('keeps the invitation, with optional fields only when given', () => {
    expect(parseSendRequest({ ...base, invitation }).invitation).toEqual(invitation);
    const full = {
      ...invitation,
      url: 'https://meet.example.com/x',
      description: 'Agenda',
      location: 'Room 1',
    };
    expect(parseSendRequest({ ...base, invitation: full }).invitation).toEqual(full);
    const allDay = { title: 'Holiday', startDate: '2025-12-25', endDate: '2025-12-26' };
    expect(parseSendRequest({ ...base, invitation: allDay }).invitation).toEqual(allDay);
  });

  it.each([
    [{ ...invitation, title: '' }, ['invitation', 'title']],
    [{ ...invitation, title: undefined }, ['invitation', 'title']],
    [{ ...invitation, startDate: 'next tuesday' }, ['invitation', 'startDate']],
    [{ ...invitation, startDate: '2025-13-01T10:00:00Z' }, ['invitation', 'startDate']],
    [{ ...invitation, endDate: '2025-12-25T10:00:00' }, ['invitation', 'endDate']],
    [{ ...invitation, endDate: '2025-12-25T09:00:00Z' }, ['invitation', 'endDate']],
    [{ ...invitation, url: 'javascript:alert(1)' }, ['invitation', 'url']],
  ])('refuses %j', (value, path) => {
    expectIssue({ ...base, invitation: value }, path);
  });
});

describe('the error', () => {
  it('names the first field path and rule in its message and keeps zod issue codes', () => {
    try {
      parseSendRequest({ ...base, recipients: ['ann@example.com', { address: 'bob@example' }] });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(MailroomError);
      const failure = error as MailroomError;
      expect(failure.message).toContain('recipients[1].address');
      expect(failure.message).toContain('Domain must contain a dot');
      expect(failure.issues).toEqual([
        {
          code: 'custom',
          path: ['recipients', 1, 'address'],
          message: 'Domain must contain a dot (for example example.com)',
        },
      ]);
    }
  });

  it('reports every broken field, not only the first', () => {
    const issues = issuesOf(() =>
      parseSendRequest({ ...base, subject: '', replyAddress: 'x', recipients: 'y' }),
    );
    expect(issues.map((issue) => issue.path)).toEqual([['subject'], ['replyAddress'], ['recipients']]);
    for (const issue of issues) {
      expect(Object.keys(issue).sort()).toEqual(['code', 'message', 'path']);
    }
  });
});
