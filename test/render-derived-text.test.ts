import type { Json, Variables } from '@mailroom/core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { CORPUS, type CorpusTemplate } from '../bench/templates/index.js';
import { deriveTextSource } from '../packages/core/src/delivery/derived-text.js';
import { prepareWithDerivedText } from '../packages/core/src/delivery/prepare-derived-text.js';
import { compileTemplate } from '../packages/core/src/render/compile-template.js';
import { htmlToText, prepareContent, renderDelivery } from '../packages/core/src/render/index.js';
import type { ContentSnapshot } from '../packages/core/src/store/records.js';

const content = (html: string, variables: Variables = {}): ContentSnapshot => ({
  subject: 's',
  preheader: null,
  html,
  text: null,
  variables,
  templateRef: null,
  templateVersion: null,
});

/** The words of a text part: what the derivation promises to keep (line wrapping may differ). */
const words = (text: string): string[] => text.split(/\s+/).filter((w) => w !== '');

/** Renders a content's text both ways: derived once per mailing, and converted from this recipient's HTML. */
function bothWays(source: ContentSnapshot) {
  const derived = prepareWithDerivedText(source);
  const perRecipient = prepareContent(source);
  return {
    derived,
    render(recipient: Parameters<typeof renderDelivery>[1]) {
      const each = renderDelivery(perRecipient, recipient);
      return { once: renderDelivery(derived, recipient).text, each: each.text, html: each.html };
    },
  };
}

describe('text part derived once per mailing', () => {
  const recipient = {
    address: 'ann@example.test',
    name: 'Ann Lee',
    variables: { code: 'A&B <1>' },
    traits: {},
  };

  it('renders the same text as deriving from each recipient’s HTML', () => {
    const html =
      '<h1>News</h1><p>Hi {{ recipient.firstName }}, your code is {{ code }}.</p><a href="https://x.test/?c={{ code }}">Go</a>';
    const { once, each, html: rendered } = bothWays(content(html)).render(recipient);
    expect(once).toBe(each);
    expect(once).toContain('Hi Ann, your code is A&B <1>.');
    expect(htmlToText(rendered ?? '')).toBe(each);
  });

  it('keeps outputs in links, drops those in hidden blocks and image alts, keeps tags in place', () => {
    expect(deriveTextSource('<a href="https://x.test/?u={{ id }}">Go</a>')).toBe(
      'Go [https://x.test/?u={{ id }}]',
    );
    expect(
      deriveTextSource('<div style="display:none">{{ first | default: "Hi" }}</div><p>Hello {{ first }}</p>'),
    ).toBe('Hello {{ first }}');
    expect(deriveTextSource('<p>Hi</p><img alt="{{ name }}" src="x.png">')).toBe('Hi');
    expect(deriveTextSource('<p>{% if vip %}VIP{% else %}Hi{% endif %} {{ name }}</p>')).toBe(
      '{% if vip %}VIP{% else %}Hi{% endif %} {{ name }}',
    );
    // A tag alone between blocks does not leave blank lines behind.
    expect(deriveTextSource('<p>A</p>{% if x %}<p>B</p>{% endif %}<p>C</p>')).toBe(
      'A\n\n{% if x %}B\n\n{% endif %}C',
    );
    // Whitespace control is applied to the markup, then left out of the text template.
    expect(deriveTextSource('<p>{{- name -}}</p>')).toBe('{{ name }}');
    // A link whose text is its URL prints once, as the per-recipient conversion does.
    expect(deriveTextSource('<a href="{{ url }}">{{ url }}</a>')).toBe('{{ url }}');
    // A hidden preheader with a whole condition in it goes away with it.
    expect(
      deriveTextSource(
        '<div style="display:none">{% if a %}{{ x }}{% endif %}</div><p>{% for i in list %}{{ i }} {% endfor %}</p>',
      ),
    ).toBe('{% for i in list %}{{ i }} {% endfor %}');
  });

  it('converts a raw output (markup) on its own when the text renders', () => {
    const html = '<h1>Hi {{ name }}</h1><div>{{ block | raw }}</div><p>Bye</p>';
    expect(deriveTextSource(html)).toBe('Hi {{ name }}\n\n{{ block | mailroom_fragment_text }}\n\nBye');
    const renders = bothWays(content(html));
    expect(renders.derived.text).not.toBeNull();
    const { once, each } = renders.render({
      address: 'a@example.test',
      name: 'Ann',
      variables: {
        name: 'Ann',
        block: '<p>Read <a href="https://x.test/a?b=1&amp;c=2">this</a></p><p>and <b>that</b> &amp; more</p>',
      },
      traits: {},
    });
    expect(once).toBe(each);
  });

  it('declines what it cannot derive safely', () => {
    // Markup printed raw may not sit in an attribute: it could close it.
    expect(deriveTextSource('<a href="{{ url | raw }}">Go</a>')).toBeNull();
    expect(deriveTextSource('<p>{{ body | escape }}</p>')).toBeNull();
    // A value in `style` could hide the block it styles (derived per value instead, below).
    expect(deriveTextSource('<p style="display:{{ d }}">Hi {{ name }}</p>')).toBeNull();
    // An output or tag in a tag's markup, outside a quoted attribute value.
    expect(deriveTextSource('<a {{ attrs }}>Go</a>')).toBeNull();
    expect(deriveTextSource('<a {% if x %}href="y"{% endif %}>Go</a>')).toBeNull();
    // A stateful tag the conversion drops, a block cut in two by a dropped part.
    expect(deriveTextSource('<div style="display:none">{% assign n = 1 %}</div><p>{{ n }}</p>')).toBeNull();
    expect(deriveTextSource('<div style="display:none">{% if a %}</div><p>x</p>{% endif %}')).toBeNull();
    expect(deriveTextSource('<p>{% capture x %}<b>{{ y }}</b>{% endcapture %}{{ x }}</p>')).toBeNull();
    expect(deriveTextSource('<pre>{{ x }}</pre>')).toBeNull();
    // A literal `{{` in the markup's text would become Liquid in the text template.
    expect(deriveTextSource('<p>&#123;&#123; x }} {{ y }}</p>')).toBeNull();
  });
});

describe('text part derived per value of the outputs that can change the markup', () => {
  // `display` decides what the conversion drops; the colour and the escaped output change nothing, but
  // the derivation cannot know: each is pinned, and the text derived once per distinct value of them.
  const html = `<div style="display:{{ show }}">Hidden for some: {{ secret }}</div>
<p style="color:{{ color | default: '#000' }}">Hello {{ name }}, {{ note | escape }}</p>
<a href="https://x.test/{{ id }}">Open</a> <img alt="{{ name }}" src="a.png" width={{ width }}>`;

  it('pins them: no single text, one text per distinct value', () => {
    expect(deriveTextSource(html)).toBeNull();
    const prepared = prepareWithDerivedText(content(html));
    expect(prepared.text).toBeNull();
    expect(prepared.textVariants?.pins).toHaveLength(4);
  });

  it('renders the same words as converting each recipient, across random recipients', () => {
    const renders = bothWays(content(html));
    // Count the recipients whose text fell back to conversion: none, with 24 distinct pinned values.
    const variants = renders.derived.textVariants as NonNullable<typeof renders.derived.textVariants>;
    const variant = variants.variant.bind(variants);
    let converted = 0;
    variants.variant = (values) => {
      const found = variant(values);
      if (found === null) converted++;
      return found;
    };
    fc.assert(
      fc.property(
        fc.constantFrom('none', 'block', 'none;', 'NONE'),
        fc.constantFrom('red', '#fff', ''),
        fc.constantFrom(1, 2),
        nasty,
        nasty,
        (show, color, width, name, secret) => {
          const variables = { show, color, note: 'a & <b>', name, secret, id: `u${width}`, width };
          const { once, each } = renders.render({
            address: 'a@example.test',
            name: 'A',
            variables,
            traits: {},
          });
          expect(words(once)).toEqual(words(each));
        },
      ),
      { numRuns: 200 },
    );
    expect(converted).toBe(0);
  });

  it('leaves a text to per-recipient conversion when a pinned output sits in a block', () => {
    const inLoop = '{% for c in colors %}<p style="color:{{ c }}">{{ c }}</p>{% endfor %}';
    const prepared = prepareWithDerivedText(content(inLoop));
    expect(prepared.text).toBeNull();
    expect(prepared.textVariants).toBeUndefined();
  });
});

/** Text that stresses the conversion: markup characters, entities, whitespace, Liquid delimiters, non-ASCII. */
const nasty = fc.string({
  unit: fc.constantFrom(
    'a',
    'Z',
    ' ',
    '  ',
    '\n',
    '<',
    '>',
    '&',
    '&amp;',
    '"',
    "'",
    '{{',
    '}}',
    '%',
    '[',
    ']',
    'é',
    '·',
    '0',
  ),
  maxLength: 12,
});

/** Replaces some string values (never a whole link URL, see deriveTextSource) with nasty ones. */
function roughen(variables: Variables, pickOne: (key: string) => string | undefined): Variables {
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(variables)) {
    const replacement = typeof value === 'string' && !key.endsWith('_url') ? pickOne(key) : undefined;
    out[key] = replacement ?? (value as Json);
  }
  return out;
}

describe('every corpus template: derived once, the same words as converting each recipient', () => {
  const compiled = new Map<string, string>();
  const htmlTemplates = CORPUS.filter((t) => t.format !== 'text');

  beforeAll(async () => {
    for (const t of htmlTemplates) compiled.set(t.ref, (await compileTemplate(t.format, t.source)).compiled);
  }, 60_000);

  it.each(htmlTemplates.map((t) => [t.ref, t] as [string, CorpusTemplate]))('%s', (_ref, template) => {
    const html = compiled.get(template.ref) as string;
    const renders = bothWays(content(html, template.globals));
    // No cliff: every corpus template gets its text derived once.
    expect(renders.derived.text).not.toBeNull();
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 99_999 }),
        fc.dictionary(
          fc.constantFrom('first_name', 'company', 'plan', 'workspace', 'city', 'location', 'ip'),
          nasty,
        ),
        (i, overrides) => {
          const r = template.recipient(i);
          const recipient = {
            address: r.address,
            name: r.name,
            variables: roughen(r.variables, (key) => overrides[key]),
            traits: {},
          };
          const { once, each } = renders.render(recipient);
          expect(words(once)).toEqual(words(each));
        },
      ),
      { numRuns: 150 },
    );
  });
});
