import { Parser } from 'liquidjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MailroomError } from '../src/base/errors.js';
import {
  compileTemplate,
  type PrepareContentOptions,
  prepareContent,
  type RenderRecipient,
  renderDelivery,
} from '../src/render/index.js';
import type { ContentSnapshot, Variables } from '../src/store/records.js';

function snapshot(parts: Partial<ContentSnapshot>): ContentSnapshot {
  return {
    subject: 'Hello',
    preheader: null,
    html: null,
    text: null,
    variables: {},
    templateRef: null,
    templateVersion: null,
    ...parts,
  };
}

function recipient(parts: Partial<RenderRecipient> = {}): RenderRecipient {
  return { address: 'jane@example.test', name: 'Jane Doe', variables: {}, traits: {}, ...parts };
}

function render(
  parts: Partial<ContentSnapshot>,
  who: Partial<RenderRecipient> = {},
  options: PrepareContentOptions = {},
) {
  return renderDelivery(prepareContent(snapshot(parts), options), recipient(who));
}

function renderFailure(
  parts: Partial<ContentSnapshot>,
  who: Partial<RenderRecipient>,
  options: PrepareContentOptions,
) {
  try {
    render(parts, who, options);
  } catch (error) {
    expect(error).toBeInstanceOf(MailroomError);
    expect((error as MailroomError).code).toBe('RENDER_FAILED');
    return error as MailroomError;
  }
  throw new Error('expected the render to fail');
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('renderDelivery: variables', () => {
  it("prefers the recipient's variables over the global ones, which remain the fallback", () => {
    const globals: Variables = { greeting: 'Hello', product: 'Widget' };
    const out = render(
      { text: '{{ greeting }} / {{ product }}', variables: globals },
      { variables: { greeting: 'Howdy' } },
    );
    expect(out.text).toBe('Howdy / Widget');
  });

  it('exposes recipient.* and profile.* with the name split into first and last names', () => {
    const out = render(
      {
        subject: 'Hi {{ recipient.firstName }}',
        text: '{{ recipient.firstName }}|{{ profile.firstName }}|{{ profile.lastName }}|{{ recipient.address }}|{{ profile.name }}',
      },
      { name: 'Jane Mary Doe' },
    );
    expect(out.subject).toBe('Hi Jane');
    expect(out.text).toBe('Jane|Jane|Mary Doe|jane@example.test|Jane Mary Doe');
  });

  it('uses the whole name as first name when it has no space (a name defaulted from the address)', () => {
    const out = render(
      { text: '[{{ recipient.firstName }}][{{ recipient.lastName }}]' },
      { name: 'jane.doe' },
    );
    expect(out.text).toBe('[jane.doe][]');
  });

  it('exposes traits, which may replace firstName but never address or name', () => {
    const out = render(
      { text: '{{ profile.city }}|{{ profile.firstName }}|{{ profile.address }}|{{ recipient.name }}' },
      { traits: { city: 'Lyon', firstName: 'Janie', address: 'evil@x.test', name: 'Mallory' } },
    );
    expect(out.text).toBe('Lyon|Janie|jane@example.test|Jane Doe');
  });

  it('keeps the real recipient object even when a variable is called recipient', () => {
    const out = render(
      { text: '{{ recipient.address }}' },
      { variables: { recipient: { address: 'spoof@x.test' } } },
    );
    expect(out.text).toBe('jane@example.test');
  });

  it('applies filters such as default', () => {
    expect(render({ text: 'Hi {{ nickname | default: "friend" }}' }).text).toBe('Hi friend');
    expect(
      render({ text: 'Hi {{ nickname | default: "friend" }}' }, { variables: { nickname: 'JJ' } }).text,
    ).toBe('Hi JJ');
  });

  it('renders a missing variable empty by default', () => {
    expect(render({ text: 'a{{ missing }}b{{ recipient.nope }}c' }).text).toBe('abc');
  });

  it('fails with RENDER_FAILED naming the variable under strictVariables', () => {
    const error = renderFailure({ text: 'Hi {{ firstName }}' }, {}, { strictVariables: true });
    expect(error.message).toContain('undefined variable: firstName');
    const nested = renderFailure({ subject: '{{ profile.city }}' }, {}, { strictVariables: true });
    expect(nested.message).toContain('undefined variable: profile.city');
    expect(nested.message).toMatch(/^subject: /);
  });

  it('still lets default and if test a missing variable under strictVariables', () => {
    const out = render(
      { text: '{{ nickname | default: "friend" }}{% if vip %} VIP{% endif %}' },
      {},
      { strictVariables: true },
    );
    expect(out.text).toBe('friend');
  });

  it('outputs a variable holding Liquid literally: variables are data', () => {
    const out = render(
      { subject: 'S {{ v }}', html: '<p>{{ v }}</p>', text: 'T {{ v }}' },
      { variables: { v: '{{ secret }}{% if true %}x{% endif %}' }, traits: {} },
    );
    expect(out.subject).toBe('S {{ secret }}{% if true %}x{% endif %}');
    expect(out.text).toBe('T {{ secret }}{% if true %}x{% endif %}');
    expect(out.html).toContain('<p>{{ secret }}{% if true %}x{% endif %}</p>');
  });
});

describe('renderDelivery: safety', () => {
  const hostile = '<script>alert(1)</script>';

  it('HTML-escapes a hostile variable in the HTML body', () => {
    const out = render(
      { html: '<p>Hi {{ name }}</p><a href="{{ link }}">x</a>' },
      {
        variables: { name: hostile, link: '" onclick="evil()' },
      },
    );
    expect(out.html).toContain('<p>Hi &lt;script&gt;alert(1)&lt;/script&gt;</p>');
    expect(out.html).not.toContain('<script>');
    expect(out.html).toContain('href="&#34; onclick=&#34;evil()"');
  });

  it('does not escape twice when the template already uses | escape', () => {
    const out = render({ html: '<p>{{ name | escape }}</p>' }, { variables: { name: 'Tom & Jerry' } });
    expect(out.html).toBe('<p>Tom &amp; Jerry</p>');
  });

  it('keeps subject and text unescaped, and the subject on one line', () => {
    const out = render(
      { subject: 'Re: {{ topic }}', text: 'Topic: {{ topic }}' },
      { variables: { topic: `${hostile}\r\nBcc: victim@x.test\u0000\t&` } },
    );
    expect(out.subject).toBe(`Re: ${hostile} Bcc: victim@x.test &`);
    expect(out.subject).not.toMatch(/[\r\n]/);
    expect(out.text).toBe(`Topic: ${hostile}\r\nBcc: victim@x.test\u0000\t&`);
  });

  it('removes line breaks written in the subject template itself', () => {
    expect(render({ subject: 'Line one\nline two\r\n' }).subject).toBe('Line one line two');
  });

  it('reads only own properties: no constructor, prototype or function', () => {
    const out = render(
      {
        text: '[{{ name.constructor }}][{{ x.__proto__ }}][{{ x.toString }}][{{ constructor }}][{{ name.size }}]',
      },
      { variables: { name: 'abc', x: { a: 1 } } },
    );
    expect(out.text).toBe('[][][][][3]');
  });

  it('stops a runaway loop with RENDER_FAILED instead of hanging', () => {
    const started = Date.now();
    const error = renderFailure(
      { text: '{% for a in (1..100000) %}{% for b in (1..100000) %}x{% endfor %}{% endfor %}' },
      {},
      { renderLimitMs: 100 },
    );
    expect(error.message).toMatch(/^text: template render limit exceeded/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('stops a huge allocation with RENDER_FAILED', () => {
    const error = renderFailure({ text: '{% for i in (1..1000000000) %}x{% endfor %}' }, {}, {});
    expect(error.message).toMatch(/memory alloc limit exceeded/);
  });

  it.each(["{% include '/etc/passwd' %}", "{% render '/etc/passwd' %}", '{% layout "/etc/passwd" %}'])(
    'never reads a file: %s is refused when the content is prepared',
    (source) => {
      for (const part of ['html', 'text', 'subject'] as const) {
        let error: unknown;
        try {
          prepareContent(snapshot({ [part]: source }));
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(MailroomError);
        expect((error as MailroomError).code).toBe('TEMPLATE_INVALID');
        expect((error as MailroomError).message).not.toContain('root:');
      }
    },
  );
});

describe('renderDelivery: parts', () => {
  it('derives the text from the rendered HTML when there is no text source', () => {
    const out = render(
      {
        html: '<html><head><title>T</title><style>p{color:red}</style></head><body><h1>Hello {{ recipient.firstName }}</h1><p>Read <a href="https://x.test/a?b={{ id }}">the news</a>.</p><img src="https://x.test/logo.png" alt="Logo"></body></html>',
      },
      { variables: { id: 7 } },
    );
    expect(out.text).toBe('Hello Jane\n\nRead the news [https://x.test/a?b=7].');
  });

  it('is text-only when there is no HTML', () => {
    const out = render({ text: 'Hi {{ recipient.firstName }}' });
    expect(out).toEqual({ subject: 'Hello', text: 'Hi Jane', html: null });
  });

  it('places the preheader hidden, escaped, at the very top of the body', () => {
    const out = render(
      {
        preheader: 'Sale for {{ recipient.firstName }} & {{ who }}',
        html: '<html><head><title>x</title></head><body class="b">\n<p>Body</p></body></html>',
      },
      { variables: { who: '<b>you</b>' } },
    );
    const html = out.html ?? '';
    const start = html.indexOf('<body class="b">') + '<body class="b">'.length;
    const after = html.slice(start);
    expect(after).toMatch(
      /^<div style="display:none;[^"]*max-height:0px;[^"]*overflow:hidden;mso-hide:all">/,
    );
    expect(after).toContain('Sale for Jane &amp; &lt;b&gt;you&lt;/b&gt;&#847;&zwnj;&nbsp;');
    expect(after.indexOf('</div>')).toBeLessThan(after.indexOf('<p>Body</p>'));
  });

  it('prepends the preheader when the HTML has no body tag, and keeps it out of the text', () => {
    const out = render({ preheader: 'Preview', html: '<p>Body</p>' });
    expect(out.html).toMatch(/^<div style="display:none[^>]*>Preview&#847;/);
    expect(out.html).toMatch(/<\/div><p>Body<\/p>$/);
    expect(out.text).toBe('Body');
  });

  it('renders a compiled MJML template end to end', async () => {
    const { compiled } = await compileTemplate(
      'mjml',
      '<mjml><mj-body><mj-section><mj-column><mj-text>Hi {{ profile.firstName }}, {{ note }}</mj-text></mj-column></mj-section></mj-body></mjml>',
    );
    const out = render({ html: compiled, preheader: 'Pre' }, { variables: { note: '<i>x</i>' } });
    expect(out.html).toContain('Hi Jane, &lt;i&gt;x&lt;/i&gt;');
    expect(out.html).toMatch(/<body[^>]*><div style="display:none/);
    expect(out.text).toBe('Hi Jane, <i>x</i>');
  });
});

describe('prepareContent', () => {
  it('parses each source once per mailing, never per recipient', () => {
    const parse = vi.spyOn(Parser.prototype, 'parse');
    const prepared = prepareContent(
      snapshot({
        subject: 'Hi {{ recipient.firstName }}',
        preheader: 'Pre {{ n }}',
        html: '<p>{{ n }}</p>',
        text: '{{ n }}',
      }),
    );
    expect(parse).toHaveBeenCalledTimes(4);
    for (let n = 0; n < 1000; n++) {
      const out = renderDelivery(prepared, recipient({ variables: { n } }));
      expect(out.text).toBe(String(n));
    }
    expect(parse).toHaveBeenCalledTimes(4);
  });

  it('refuses a source that does not parse, naming the part and line', () => {
    expect(() => prepareContent(snapshot({ html: '<p>\n{{ x </p>' }))).toThrowError(/^html: .*line:2/);
    expect(() => prepareContent(snapshot({ subject: '{% if %}' }))).toThrowError(MailroomError);
  });
});
