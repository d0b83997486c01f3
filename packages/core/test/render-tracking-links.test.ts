import { decodeHTMLAttribute } from 'entities';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { prepareWithDerivedText } from '../src/delivery/prepare-derived-text.js';
import { renderDelivery } from '../src/render/index.js';
import type { ContentSnapshot } from '../src/store/records.js';
import {
  clickDestination,
  linkMapOf,
  prepareTracked,
  type TrackingSetup,
  trackingRewrite,
} from '../src/tracking/tracking-links.js';
import { parseTrackingToken, verifyTrackingToken } from '../src/tracking/tracking-token.js';

const SECRET = 'a-test-secret-of-enough-length';

function content(html: string, text: string | null = null): ContentSnapshot {
  return {
    subject: 'Hi',
    preheader: null,
    html,
    text,
    variables: {},
    templateRef: null,
    templateVersion: null,
  };
}

function setup(html: string, overrides: Partial<TrackingSetup> = {}): TrackingSetup {
  return {
    baseUrl: 'https://t.example.test/api',
    secret: SECRET,
    projectId: 'prj_1',
    mailingId: 'bcm_1',
    opens: true,
    clicks: true,
    textLinks: false,
    links: linkMapOf(html),
    ...overrides,
  };
}

const prepare = (c: ContentSnapshot) => prepareWithDerivedText(c, {});
const recipient = (variables: Record<string, unknown> = {}) => ({
  address: 'ann@example.test',
  name: 'Ann',
  variables: variables as never,
  traits: {},
});
const STAMP = { deliveryId: 'dlv_1', sentAt: 1_764_000_000 };

/** Renders `html` tracked for one recipient. */
function render(
  html: string,
  variables: Record<string, unknown> = {},
  overrides: Partial<TrackingSetup> = {},
) {
  const c = content(html);
  const prepared = prepareTracked(c, setup(html, overrides), prepare);
  return renderDelivery(prepared, recipient(variables), trackingRewrite(prepared, STAMP));
}

/** The URL a tracked link redirects to, decoded from its token as the engine would. */
function destination(link: string, links: string[]): string | undefined {
  const token = link.slice(link.lastIndexOf('/') + 1);
  const parsed = parseTrackingToken('click', token);
  if (!parsed || !verifyTrackingToken(SECRET, parsed)) return undefined;
  return clickDestination(links, parsed.index as number, parsed.values);
}

describe('the link map of a template', () => {
  it('keeps the distinct trackable hrefs in order, as written', () => {
    expect(
      linkMapOf(`<a href="https://a.test/1">x</a><A HREF='http://b.test/?x=1&amp;y=2'>y</A>
        <a href=https://c.test/unquoted>z</a><area href="https://d.test/map"><a href="https://a.test/1">again</a>
        <a title="{{ t | append: '\\">' }}" href="https://e.test/{{ id }}">e</a>
        <a {% if x %}class="y"{% endif %} href="{{ url }}">f</a>`),
    ).toEqual([
      'https://a.test/1',
      'http://b.test/?x=1&amp;y=2',
      'https://c.test/unquoted',
      'https://d.test/map',
      'https://e.test/{{ id }}',
      '{{ url }}',
    ]);
  });

  it('leaves mailto, tel, anchors, relative links, unsubscribe links and notrack links out', () => {
    expect(
      linkMapOf(`<a href="mailto:a@b.test">m</a><a href="tel:+1">t</a><a href="#top">a</a><a href="/rel">r</a>
        <a href="https://x.test/Unsubscribe?u=1">u</a><a href="{{ unsubscribe_url }}">u2</a>
        <a data-mailroom-notrack href="https://private.test/">p</a><a href="javascript:alert(1)">j</a>
        <link href="https://fonts.test/css"><img src="https://img.test/a.png">`),
    ).toEqual([]);
  });
});

describe('tracked rendering', () => {
  it('rewrites each link per recipient, signed, and leaves everything else byte for byte', () => {
    const html = '<p>Hi</p><a href="https://a.test/?x=1&amp;y=2">A</a> <a href="mailto:a@b.test">m</a>';
    const out = render(html, {}, { opens: false });
    const links = [...(out.html ?? '').matchAll(/href="([^"]+)"/g)].map((m) => m[1] as string);
    expect(links[0]).toMatch(
      /^https:\/\/t\.example\.test\/api\/t\/c\/prj_1\.bcm_1\.dlv_1\.[0-9a-z]+\.0\.[\w-]{22}$/,
    );
    expect(destination(links[0] as string, linkMapOf(html))).toBe('https://a.test/?x=1&y=2');
    expect(out.html).toBe(html.replace('https://a.test/?x=1&amp;y=2', links[0] as string));
    expect(out.text).toContain('https://a.test/?x=1&y=2');
  });

  it('gives a Liquid href each recipient’s own URL, signed into the token, also inside loops', () => {
    const html =
      '{% for p in products %}<a href="https://shop.test/p/{{ p }}?u={{ user }}">{{ p }}</a>{% endfor %}<a href="{{ cta }}">cta</a>';
    const out = render(html, { products: ['x', 'y&z'], user: 'ann', cta: 'mailto:a@b.test' });
    const links = [...(out.html ?? '').matchAll(/href="([^"]+)"/g)].map((m) => m[1] as string);
    expect(links).toHaveLength(3);
    expect(destination(links[0] as string, linkMapOf(html))).toBe('https://shop.test/p/x?u=ann');
    expect(destination(links[1] as string, linkMapOf(html))).toBe('https://shop.test/p/y&z?u=ann');
    // A Liquid href that renders to something untrackable stays as rendered.
    expect(links[2]).toBe('mailto:a@b.test');
    // The text (derived per recipient here: the template has a loop) keeps the originals.
    expect(out.text).toContain('https://shop.test/p/y&z?u=ann');
    expect(out.text).not.toContain('/t/c/');
  });

  it('signs the links that rendered the same values once, and each token only for those links', () => {
    const html = `<a href="https://a.test/1?u={{ u }}&amp;x=1">1</a><a href="https://a.test/2?u={{ u }}">2</a>
      <a href="https://b.test/?c={{ c }}&amp;u={{ u }}">3</a><a href="https://fixed.test/">4</a>
      {% for p in ps %}<a href="https://a.test/p/{{ p }}">p</a>{% endfor %}`;
    const links = linkMapOf(html);
    const out = render(html, { u: 'ann 1', c: 'c&d', ps: ['x', 'y'] });
    const hrefs = [...(out.html ?? '').matchAll(/href="([^"]+)"/g)].map((m) => m[1] as string);
    expect(hrefs.map((h) => destination(h, links))).toEqual([
      'https://a.test/1?u=ann 1&x=1',
      'https://a.test/2?u=ann 1',
      'https://b.test/?c=c&d&u=ann 1',
      'https://fixed.test/',
      'https://a.test/p/x',
      'https://a.test/p/y',
    ]);
    const suffix = (h: string) => h.split('.').slice(-3).join('.');
    // Links 0 and 1 rendered the same value: one signature; the loop's two renders have their own.
    expect(suffix(hrefs[0] as string)).toBe(suffix(hrefs[1] as string));
    expect(new Set(hrefs.filter((_, i) => i !== 3).map(suffix)).size).toBe(4);
    const withIndex = (h: string, i: number) => h.replace(/\.[0-9a-z]+(\.[^.]+\.[^.]+\.[^.]+)$/, `.${i}$1`);
    // Link 0's values on link 1 (signed for both) go where link 1 went for this recipient; on link 2 or
    // the fixed link 3 (not signed for them), nowhere.
    expect(destination(withIndex(hrefs[0] as string, 1), links)).toBe('https://a.test/2?u=ann 1');
    expect(destination(withIndex(hrefs[0] as string, 2), links)).toBeUndefined();
    expect(destination(withIndex(hrefs[0] as string, 3), links)).toBeUndefined();
    // A fixed link's token names any fixed link of the mailing (index outside the MAC), never a Liquid one.
    const fixed = hrefs[3] as string;
    expect(destination(fixed.replace(/\.3\.([^.]+)$/, '.0.$1'), links)).toBeUndefined();
    expect(destination(fixed.replace(/\.3\.([^.]+)$/, '.9.$1'), links)).toBeUndefined();
  });

  it('redirects a Liquid link exactly where its rendered href points, character references and all', () => {
    const text = fc.string({
      unit: fc.constantFrom(
        'unsub',
        'scribe',
        'nsubscribe',
        '&#117;',
        '&',
        'amp;',
        'amp',
        '#',
        '38;',
        ';',
        'x',
        ' ',
        '/',
      ),
    });
    fc.assert(
      fc.property(text, text, text, text, (s1, s2, a, b) => {
        const html = `<a href="https://x.test/${s1}{{ a | raw }}${s2}{{ b | raw }}">x</a>`;
        const plain = prepare(content(html));
        const rendered =
          /href="([^"]*)"/.exec(renderDelivery(plain, recipient({ a, b })).html ?? '')?.[1] ?? '';
        const expected = decodeHTMLAttribute(rendered).trim();
        const href = /href="([^"]*)"/.exec(render(html, { a, b }).html ?? '')?.[1] ?? '';
        // An unsubscribe link stays as rendered (also when a value's character reference spells it).
        if (/unsubscribe/i.test(expected)) expect(href).toBe(rendered);
        else expect(destination(href, linkMapOf(html))).toBe(expected);
      }),
      {
        numRuns: 500,
        // `unsubscribe` in a value, and made of a value with the text before or after it.
        examples: [
          ['', '0123456789', 'UnSubscribe', 'x'],
          ['unsub', '&amp;x=0123456789', 'scribe', ''],
          ['', 'scribe/0123456789', 'unsub', 'x'],
          ['', '/0123456789/', 'x', 'un&#115;ubscribe'],
        ],
      },
    );
  });

  it('carries the whole rendered href of a Liquid href with tags or whitespace control', () => {
    const html = `<a href="https://a.test/{% if vip %}vip{% else %}std{% endif %}?u={{ u }}">a</a>
      <a href="https://b.test/ {{- u -}} /x">b</a><a href="{{ url }}">c</a>`;
    const links = linkMapOf(html);
    const out = render(html, { vip: true, u: 'ann', url: 'https://c.test/?q=1&r=2' });
    const hrefs = [...(out.html ?? '').matchAll(/href="([^"]+)"/g)].map((m) => m[1] as string);
    expect(hrefs.map((h) => destination(h, links))).toEqual([
      'https://a.test/vip?u=ann',
      'https://b.test/ann/x',
      'https://c.test/?q=1&r=2',
    ]);
  });

  it('adds the pixel before </body>, or at the end without one', () => {
    const withBody = render('<html><body><p>x</p></body></html>', {}, { clicks: false });
    expect(withBody.html).toMatch(
      /^<html><body><p>x<\/p><img src="https:\/\/t\.example\.test\/api\/t\/o\/prj_1\.bcm_1\.dlv_1\.[0-9a-z]+\.[\w-]{22}\.gif" width="1" height="1" alt="" [^>]*\/><\/body><\/html>$/,
    );
    expect(render('<p>x</p>', {}, { clicks: false }).html).toMatch(/^<p>x<\/p><img [^>]+\/>$/);
  });

  it('does not let a recipient’s data forge a marker', () => {
    const html = '<p>{{ note }}</p><a href="https://a.test/">a</a>';
    const note = '\x01fake0\x02https://evil.test/\x03fake';
    const out = render(html, { note });
    expect(out.html).toContain(note);
    expect((out.html ?? '').match(/\/t\/c\//g)).toHaveLength(1);
  });

  it('tracks the derived text’s links when the mailing opts in', () => {
    const out = render('<a href="https://a.test/">a</a>', {}, { textLinks: true });
    expect(out.text).toMatch(/\[https:\/\/t\.example\.test\/api\/t\/c\//);
  });

  it('is the plain preparation without a setup', () => {
    const c = content('<a href="https://a.test/">a</a>');
    const plain = prepare(c);
    const none = prepareTracked(c, null, () => plain);
    expect(none).toBe(plain);
    expect(trackingRewrite(none, STAMP)).toBeUndefined();
    expect(renderDelivery(none, recipient(), trackingRewrite(none, STAMP))).toEqual(
      renderDelivery(plain, recipient()),
    );
  });
});
