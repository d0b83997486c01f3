import { describe, expect, it } from 'vitest';
import { contentFromMessage, contentFromTemplate, singleLine, splitName } from '../src/render/index.js';
import type { TemplateRecord } from '../src/store/records.js';

describe('contentFromMessage', () => {
  it.each([
    '<p>Hello</p>',
    'Hi<br>there',
    'Hi<br/>there',
    '<html><body>x</body></html>',
    'See <a href="https://x.test">this</a>',
    '<div\nclass="x">y</div>',
  ])('reads %j as HTML', (message) => {
    expect(contentFromMessage(message)).toEqual({ html: message, text: null });
  });

  it.each([
    'Hello {{ recipient.firstName }}',
    'if a < b and c > d then',
    '2 <3 and 4>1',
    'Mail me: <jane@example.test>',
    '',
  ])('reads %j as plaintext', (message) => {
    expect(contentFromMessage(message)).toEqual({ html: null, text: message });
  });
});

describe('contentFromTemplate', () => {
  const base = { compiled: 'C' } satisfies Pick<TemplateRecord, 'compiled'>;
  it('maps a text template to the text part and html/mjml to the html part', () => {
    expect(contentFromTemplate({ ...base, format: 'text' })).toEqual({ html: null, text: 'C' });
    expect(contentFromTemplate({ ...base, format: 'html' })).toEqual({ html: 'C', text: null });
    expect(contentFromTemplate({ ...base, format: 'mjml' })).toEqual({ html: 'C', text: null });
  });
});

describe('splitName and singleLine', () => {
  it('splits at the first whitespace', () => {
    expect(splitName('  Jane   Mary Doe ')).toEqual({ firstName: 'Jane', lastName: 'Mary Doe' });
    expect(splitName('jane.doe')).toEqual({ firstName: 'jane.doe', lastName: '' });
    expect(splitName('')).toEqual({ firstName: '', lastName: '' });
  });

  it('turns control characters into spaces', () => {
    expect(singleLine('a\r\nb\tc\u0000d\u2028e\u0085f ')).toBe('a b c d e f');
  });
});
