import { describe, expect, it } from 'vitest';
import type { ValidationIssue } from '../src/base/errors.js';
import { MailroomError } from '../src/base/errors.js';
import { contentTypeFor, parseSendRequest } from '../src/request/index.js';

const base = {
  subject: 'Your report',
  sender: 'reports@example.com',
  message: 'Attached.',
  recipients: 'ann@example.com',
};

const pdfBase64 = Buffer.from('%PDF-1.4 fake').toString('base64');

function attachmentsOf(...attachments: unknown[]) {
  return parseSendRequest({ ...base, attachments }).attachments;
}

function issuesOf(attachments: unknown): ValidationIssue[] {
  try {
    parseSendRequest({ ...base, attachments });
  } catch (error) {
    expect(error).toBeInstanceOf(MailroomError);
    expect((error as MailroomError).code).toBe('VALIDATION_FAILED');
    return (error as MailroomError).issues ?? [];
  }
  throw new Error('expected a VALIDATION_FAILED error');
}

function expectIssue(attachments: unknown, path: Array<string | number>, rule?: string) {
  const issues = issuesOf(attachments);
  const issue = issues.find((candidate) => JSON.stringify(candidate.path) === JSON.stringify(path));
  expect(issue, `no issue at ${JSON.stringify(path)} in ${JSON.stringify(issues)}`).toBeDefined();
  if (rule) expect(issue?.message).toContain(rule);
}

describe('attachments by URL', () => {
  it('keeps the URL and takes the content type from the name', () => {
    expect(attachmentsOf({ name: 'Q1 report.pdf', url: 'https://files.example.com/r/123' })).toEqual([
      { filename: 'Q1 report.pdf', contentType: 'application/pdf', url: 'https://files.example.com/r/123' },
    ]);
  });

  it("derives the name from the URL path's last segment when none is given", () => {
    expect(attachmentsOf({ url: 'http://files.example.com/a/b/Invoice%20%2342.PDF?sig=abc#x' })).toEqual([
      {
        filename: 'Invoice #42.PDF',
        contentType: 'application/pdf',
        url: 'http://files.example.com/a/b/Invoice%20%2342.PDF?sig=abc#x',
      },
    ]);
  });

  it.each([
    [{ url: 'https://files.example.com/download' }, ['attachments', 0, 'name'], 'extension'],
    [{ url: 'https://files.example.com/' }, ['attachments', 0, 'name'], 'extension'],
    [{ url: 'https://files.example.com/a%0D%0Ab.pdf' }, ['attachments', 0, 'name']],
    [{ name: 'a.pdf', url: 'ftp://files.example.com/a.pdf' }, ['attachments', 0, 'url'], 'http(s)'],
    [{ name: 'a.pdf', url: 'file:///etc/passwd.pdf' }, ['attachments', 0, 'url'], 'http(s)'],
    [{ name: 'a.pdf', url: 'javascript:alert(1)//a.pdf' }, ['attachments', 0, 'url'], 'http(s)'],
    [{ name: 'a.pdf', url: 'not a url' }, ['attachments', 0, 'url'], 'http(s)'],
    [{ name: 'a.pdf', url: 5 }, ['attachments', 0, 'url']],
  ])('refuses %j', (attachment, path, rule?: string) => {
    expectIssue([attachment], path, rule);
  });
});

describe('attachments by content', () => {
  it('keeps raw base64', () => {
    expect(attachmentsOf({ name: 'report.pdf', content: pdfBase64 })).toEqual([
      { filename: 'report.pdf', contentType: 'application/pdf', contentBase64: pdfBase64 },
    ]);
  });

  it('unwraps a base64 data URI to plain base64', () => {
    expect(
      attachmentsOf({ name: 'report.pdf', content: `data:application/pdf;base64,${pdfBase64}` }),
    ).toEqual([{ filename: 'report.pdf', contentType: 'application/pdf', contentBase64: pdfBase64 }]);
    expect(attachmentsOf({ name: 'x.png', content: 'DATA:image/png;charset=binary;BASE64,AAAA' })).toEqual([
      { filename: 'x.png', contentType: 'image/png', contentBase64: 'AAAA' },
    ]);
  });

  it("uses the data URI's type when the extension is unknown, else application/octet-stream", () => {
    expect(attachmentsOf({ name: 'scan.xyz', content: 'data:image/png;base64,AAAA' })[0]?.contentType).toBe(
      'image/png',
    );
    expect(attachmentsOf({ name: 'scan.xyz', content: 'AAAA' })[0]?.contentType).toBe(
      'application/octet-stream',
    );
  });

  it.each([
    [{ name: 'a.pdf', content: 'QUJ' }, 'base64'],
    [{ name: 'a.pdf', content: 'QU=D' }, 'base64'],
    [{ name: 'a.pdf', content: 'Q===' }, 'base64'],
    [{ name: 'a.pdf', content: 'QUJD\n' }, 'base64'],
    [{ name: 'a.pdf', content: 'QU-D' }, 'base64'],
    [{ name: 'a.pdf', content: '' }, 'empty'],
    [{ name: 'a.pdf', content: 'data:application/pdf,hello' }, 'base64-encoded'],
    [{ name: 'a.pdf', content: 'data:application/pdf;base64' }, 'comma'],
    [{ name: 'a.pdf', content: 'data:application/pdf;base64,' }, 'no data'],
    [{ name: 'a.pdf', content: 'data:application/pdf;base64,QUJ' }, 'base64'],
  ])('refuses bad content %j', (attachment, rule) => {
    expectIssue([attachment], ['attachments', 0, 'content'], rule);
  });

  it('requires a name with an extension', () => {
    expectIssue([{ content: pdfBase64 }], ['attachments', 0, 'name'], 'extension');
    expectIssue(
      [{ content: `data:application/pdf;base64,${pdfBase64}` }],
      ['attachments', 0, 'name'],
      'extension',
    );
    expectIssue([{ name: 'report', content: pdfBase64 }], ['attachments', 0, 'name'], 'extension');
    expectIssue([{ name: 'report.', content: pdfBase64 }], ['attachments', 0, 'name'], 'extension');
    expectIssue([{ name: '.pdf', content: pdfBase64 }], ['attachments', 0, 'name'], 'extension');
    expectIssue(
      [{ name: 'a\r\nX-Evil: 1.pdf', content: pdfBase64 }],
      ['attachments', 0, 'name'],
      'line breaks',
    );
    expectIssue([{ name: '../../etc/passwd.txt', content: pdfBase64 }], ['attachments', 0, 'name'], 'path');
  });
});

describe('url or content', () => {
  it('refuses both and neither', () => {
    expectIssue(
      [{ name: 'a.pdf', url: 'https://x.example.com/a.pdf', content: 'AAAA' }],
      ['attachments', 0, 'content'],
      'not both',
    );
    expectIssue([{ name: 'a.pdf' }], ['attachments', 0, 'url'], 'Either url or content');
    expectIssue(
      [{ name: 'a.pdf', url: null, content: null }],
      ['attachments', 0, 'url'],
      'Either url or content',
    );
  });

  it('names the index of the bad attachment', () => {
    expectIssue(
      [
        { name: 'a.pdf', content: 'AAAA' },
        { name: 'b.pdf', content: 'AAA' },
      ],
      ['attachments', 1, 'content'],
    );
    expectIssue(['a.pdf'], ['attachments', 0]);
    expectIssue({ name: 'a.pdf', content: 'AAAA' }, ['attachments']);
  });
});

describe('helpers', () => {
  it.each([
    ['a.pdf', 'application/pdf'],
    ['PHOTO.JPG', 'image/jpeg'],
    ['p.jpeg', 'image/jpeg'],
    ['p.png', 'image/png'],
    ['p.gif', 'image/gif'],
    ['p.webp', 'image/webp'],
    ['p.svg', 'image/svg+xml'],
    ['t.txt', 'text/plain'],
    ['t.csv', 'text/csv'],
    ['t.html', 'text/html'],
    ['invite.ics', 'text/calendar'],
    ['d.json', 'application/json'],
    ['a.zip', 'application/zip'],
    ['w.doc', 'application/msword'],
    ['w.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
    ['x.xls', 'application/vnd.ms-excel'],
    ['x.xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
    ['p.ppt', 'application/vnd.ms-powerpoint'],
    ['p.pptx', 'application/vnd.openxmlformats-officedocument.presentationml.presentation'],
    ['s.mp3', 'audio/mpeg'],
    ['v.mp4', 'video/mp4'],
    ['archive.tar.gz', 'application/gzip'],
    ['unknown.qqq', 'application/octet-stream'],
    ['noext', 'application/octet-stream'],
  ])('contentTypeFor(%s) is %s', (name, type) => {
    expect(contentTypeFor(name)).toBe(type);
  });
});
