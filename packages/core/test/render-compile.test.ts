import { describe, expect, it } from 'vitest';
import { MailroomError } from '../src/base/errors.js';
import { compileTemplate } from '../src/render/index.js';

const NEWSLETTER = `<mjml>
  <mj-head>
    <mj-title>News for {{ recipient.firstName }}</mj-title>
  </mj-head>
  <mj-body>
    <mj-section>
      <mj-column>
        <mj-text>Hello {{ recipient.firstName | default: "friend" }}</mj-text>
        <mj-raw>{% if vip %}</mj-raw>
        <mj-text>Members only</mj-text>
        <mj-raw>{% endif %}</mj-raw>
        <mj-button href="https://shop.test/?id={{ id }}">Shop</mj-button>
      </mj-column>
    </mj-section>
  </mj-body>
</mjml>`;

async function refusal(format: 'html' | 'mjml' | 'text', source: string): Promise<MailroomError> {
  const error = await compileTemplate(format, source).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MailroomError);
  expect((error as MailroomError).code).toBe('TEMPLATE_INVALID');
  return error as MailroomError;
}

describe('compileTemplate', () => {
  it('compiles MJML to HTML and keeps every Liquid tag and output', async () => {
    const { compiled } = await compileTemplate('mjml', NEWSLETTER);
    expect(compiled).toMatch(/^<!doctype html>/i);
    expect(compiled).not.toContain('<mj-');
    expect(compiled).toContain('Hello {{ recipient.firstName | default: "friend" }}');
    expect(compiled).toContain('{% if vip %}');
    expect(compiled).toContain('{% endif %}');
    expect(compiled).toContain('href="https://shop.test/?id={{ id }}"');
    expect(compiled).toContain('<title>News for {{ recipient.firstName }}</title>');
  });

  it('returns html and text sources unchanged', async () => {
    const html = '<p>Hi {{ name }}</p>';
    expect(await compileTemplate('html', html)).toEqual({ compiled: html });
    expect(await compileTemplate('text', 'Hi {{ name }}')).toEqual({ compiled: 'Hi {{ name }}' });
  });

  it('refuses an unknown MJML tag, naming its line and tag', async () => {
    const source =
      '<mjml>\n<mj-body>\n<mj-section>\n<mj-colum><mj-text>x</mj-text></mj-colum>\n</mj-section>\n</mj-body>\n</mjml>';
    const error = await refusal('mjml', source);
    expect(error.message).toContain('line 4');
    expect(error.message).toContain('mj-colum');
  });

  it('refuses an illegal MJML attribute, naming its line and tag', async () => {
    const source =
      '<mjml>\n<mj-body>\n<mj-section>\n<mj-column>\n<mj-text colour="red">x</mj-text>\n</mj-column>\n</mj-section>\n</mj-body>\n</mjml>';
    const error = await refusal('mjml', source);
    expect(error.message).toMatch(/line 5 <mj-text>: Attribute colour is illegal/);
  });

  it('refuses input that is not MJML', async () => {
    await refusal('mjml', 'just some text');
  });

  it('refuses mj-include instead of reading a file', async () => {
    const source = '<mjml>\n<mj-body>\n<mj-include path="/etc/passwd" />\n</mj-body>\n</mjml>';
    const error = await refusal('mjml', source);
    expect(error.message).toMatch(/line 3 <mj-include>/);
  });

  it('refuses Liquid that MJML would silently drop', async () => {
    const source = `<mjml>\n<mj-body>\n<mj-section>\n<mj-column>\n{% if vip %}\n<mj-text>VIP</mj-text>\n{% endif %}\n</mj-column>\n</mj-section>\n</mj-body>\n</mjml>`;
    const error = await refusal('mjml', source);
    expect(error.message).toContain('line 5');
    expect(error.message).toContain('{% if vip %}');
    expect(error.message).toContain('mj-raw');
  });

  it.each(['html', 'mjml', 'text'] as const)(
    'refuses a Liquid syntax error in %s, naming its line',
    async (format) => {
      const body = 'line two\n{% if x %}never closed';
      const source =
        format === 'mjml'
          ? `<mjml><mj-body><mj-section><mj-column><mj-text>\n${body}</mj-text></mj-column></mj-section></mj-body></mjml>`
          : `first\n${body}`;
      const error = await refusal(format, source);
      expect(error.message).toMatch(/line:3/);
    },
  );

  it('refuses an unclosed output and an unknown tag or filter', async () => {
    expect((await refusal('html', '<p>{{ name </p>')).message).toMatch(/not closed/);
    expect((await refusal('html', '{% frobnicate %}')).message).toMatch(/tag "frobnicate" not found/);
    expect((await refusal('text', '{{ name | shout }}')).message).toMatch(/undefined filter: shout/);
  });

  it.each(["{% include '/etc/passwd' %}", "{% render '/etc/passwd' %}", "{% layout '/etc/passwd' %}"])(
    'refuses the file tag in %s',
    async (source) => {
      const error = await refusal('html', source);
      expect(error.message).toMatch(/not found/);
      expect(error.message).not.toContain('root:');
    },
  );
});
