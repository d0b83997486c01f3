import { randomBytes } from 'node:crypto';
import { decodeHTMLAttribute } from 'entities';
import { Tokenizer } from 'htmlparser2';
import type { Template } from 'liquidjs';
import type { HtmlRewrite } from '../render/html-rewrite.js';
import { parseLiquid } from '../render/parse-liquid.js';
import type { ContentSnapshot } from '../store/records.js';
import { deliverySigner, MAX_TOKEN_URL_LENGTH } from './tracking-token.js';

/**
 * Open and click tracking, applied to a mailing's HTML template once (the link map and the marked
 * template) and to each recipient's rendered HTML by a scan for the markers: no recipient's HTML is
 * parsed. Off unless the engine has `tracking` and the mailing does not turn it off.
 *
 * At preparation, each trackable `href` of the template is wrapped in two markers that carry a random
 * nonce of the preparation (a recipient's data cannot forge one) and the link's index in the link map:
 * `\x01<nonce><index>\x02<href as written>\x03<nonce>`. Liquid inside the `href` renders as usual between
 * the markers. After each render, every marked span becomes `<base>/t/c/<token>`: the token names the
 * delivery and the link; a link whose `href` holds Liquid also carries the recipient's rendered URL
 * (signed), so a loop or a variable gives each recipient the right destination without rendering
 * anything at click time. The same scan gives the untracked HTML from which the text part is derived.
 */

/** A mailing's tracking, as the worker sets it up before preparing its content. */
export interface TrackingSetup {
  /** Where `/t/c/...` and `/t/o/...` are served, without a trailing slash. */
  baseUrl: string;
  /** The HMAC key of the tokens. */
  secret: string;
  projectId: string;
  mailingId: string;
  /** Add the open pixel. */
  opens: boolean;
  /** Rewrite links. */
  clicks: boolean;
  /** Derive the text part from the tracked HTML (its links tracked too). */
  textLinks: boolean;
  /**
   * The mailing's link map: each trackable `href` as written in the template, by index (see
   * {@link linkMapOf}). Kept in the store once per mailing, so every process resolves the same indexes.
   */
  links: readonly string[];
}

/** The tracking of a prepared content: its setup and the nonce of its markers. */
export interface PreparedTracking extends TrackingSetup {
  /** `\x01` + nonce: the start of a marked link. */
  readonly open: string;
  /** `\x03` + nonce: its end. */
  readonly close: string;
  /** The shape of each link map entry (null: fixed), computed once per prepared content. */
  readonly shapes: ReadonlyArray<LinkShape | null>;
}

/** A prepared content, with its tracking when the mailing is tracked (`prepareTracked`). */
export type TrackedContent<P> = P & { readonly tracking?: PreparedTracking };

/** The delivery a render is for, as the tracking tokens name it. */
export interface TrackingStamp {
  deliveryId: string;
  /** The render time, in seconds since the epoch. */
  sentAt: number;
}

/** The attribute that keeps a link as it is. */
export const NOTRACK_ATTRIBUTE = 'data-mailroom-notrack';

const LIQUID = /\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g;

/** A trackable `href` value in a template: its place in the source and its text as written. */
interface LinkSpot {
  start: number;
  end: number;
  source: string;
}

/**
 * The trackable links of an HTML template, in order: the `href` of every `<a>` and `<area>` whose value
 * is an absolute http(s) URL or starts with Liquid output (decided per recipient), except links marked
 * `data-mailroom-notrack` and unsubscribe links (an `href` that mentions `unsubscribe`, or the Liquid
 * `preferences_url`: a scanner must not be counted as clicking it, and the recipient should see where it
 * goes). `mailto:`, `tel:`, anchors and
 * relative links are not trackable. Liquid is masked before the scan, so quotes and `>` inside it do not
 * end a tag.
 */
export function findTrackableLinks(html: string): LinkSpot[] {
  const masked = html.replace(LIQUID, (m) => `${m.slice(0, 2)}${'_'.repeat(m.length - 4)}${m.slice(-2)}`);
  const spots: LinkSpot[] = [];
  let tag = '';
  let attr = '';
  let valueStart = -1;
  let valueEnd = -1;
  let href: { start: number; end: number } | undefined;
  let notrack = false;
  function endTag(): void {
    if ((tag === 'a' || tag === 'area') && href && !notrack) {
      const source = html.slice(href.start, href.end);
      if (isTrackableSource(source)) spots.push({ ...href, source });
    }
    tag = '';
  }
  const tokenizer = new Tokenizer(
    { decodeEntities: false },
    {
      onopentagname(start, end) {
        tag = masked.slice(start, end).toLowerCase();
        href = undefined;
        notrack = false;
      },
      onattribname(start, end) {
        attr = masked.slice(start, end).toLowerCase();
        valueStart = -1;
      },
      onattribdata(start, end) {
        if (valueStart < 0) valueStart = start;
        valueEnd = end;
      },
      onattribend() {
        if (attr === NOTRACK_ATTRIBUTE) notrack = true;
        else if (attr === 'href' && valueStart >= 0 && href === undefined) {
          href = { start: valueStart, end: valueEnd };
        }
      },
      onopentagend: endTag,
      onselfclosingtag: endTag,
      onattribentity() {},
      oncdata() {},
      onclosetag() {},
      oncomment() {},
      ondeclaration() {},
      onend() {},
      onprocessinginstruction() {},
      ontext() {},
      ontextentity() {},
    },
  );
  tokenizer.write(masked);
  tokenizer.end();
  return spots;
}

/** The link map of an HTML template: its distinct trackable `href` values, in order of appearance. */
export function linkMapOf(html: string): string[] {
  return [...new Set(findTrackableLinks(html).map((s) => s.source))];
}

/**
 * What tracking replaces in a prepared content (render's `PreparedContent`), named structurally so that
 * tracking does not depend on the renderer that calls it.
 */
interface TrackablePrepared {
  readonly html: Template[] | null;
  readonly text: Template[] | null;
  readonly textVariants?: unknown;
  readonly tracking?: PreparedTracking;
}

/**
 * A mailing's content prepared with tracking: `prepare` (the usual preparation, text derived from the
 * UNtracked HTML) runs on the content as it is, then the HTML template alone is replaced by its marked
 * version, and the tracking rides along for `renderDelivery`. Without `setup`, or for text-only content,
 * the plain preparation.
 */
export function prepareTracked<P extends TrackablePrepared>(
  content: ContentSnapshot,
  setup: TrackingSetup | null | undefined,
  prepare: (content: ContentSnapshot) => P,
): TrackedContent<P> {
  const prepared = prepare(content);
  if (!setup || content.html === null || prepared.html === null || !(setup.opens || setup.clicks)) {
    return prepared;
  }
  const nonce = randomBytes(9).toString('base64url');
  const tracking: PreparedTracking = {
    ...setup,
    open: `\x01${nonce}`,
    close: `\x03${nonce}`,
    shapes: setup.links.map(linkShape),
  };
  const marked = setup.clicks ? markLinks(content.html, setup.links, tracking) : null;
  const html = marked === null ? prepared.html : parseLiquid('html', marked, 'html');
  // Opted in: the text is derived per recipient from the tracked HTML, links and all (no text template
  // or text variants made from the untracked HTML).
  if (setup.textLinks && content.text === null) {
    const { textVariants: _untracked, ...rest } = prepared;
    return { ...rest, html, text: null, tracking } as P;
  }
  return { ...prepared, html, tracking };
}

/**
 * The tracking of one recipient's HTML, for `renderDelivery`: links tracked and the open pixel added, signed
 * for `stamp`'s delivery; `undefined` when the content is not tracked.
 */
export function trackingRewrite(
  prepared: { readonly tracking?: PreparedTracking },
  stamp: TrackingStamp,
): HtmlRewrite | undefined {
  const tracking = prepared.tracking;
  if (tracking === undefined) return undefined;
  return { textFromRewritten: tracking.textLinks, apply: (html) => applyTracking(tracking, html, stamp) };
}

/** The template with each link of `links` wrapped in markers; links absent from the map stay as they are. */
function markLinks(html: string, links: readonly string[], tracking: PreparedTracking): string {
  const index = new Map(links.map((source, i) => [source, i]));
  let out = '';
  let at = 0;
  for (const spot of findTrackableLinks(html)) {
    const i = index.get(spot.source);
    if (i === undefined) continue;
    out += `${html.slice(at, spot.start)}${tracking.open}${i.toString(36)}\x02${spot.source}${tracking.close}`;
    at = spot.end;
  }
  return out + html.slice(at);
}

/**
 * One recipient's rendered HTML with its marked links replaced by tracking links and the open pixel
 * added, and the same HTML without tracking (for the text part, built only if asked for). One scan for
 * the markers, one HMAC for the pixel and the fixed links, one per distinct set of Liquid values.
 */
export function applyTracking(
  tracking: PreparedTracking,
  rendered: string,
  stamp: TrackingStamp,
): { html: string; plain: () => string } {
  const { open, close, shapes } = tracking;
  const signer = deliverySigner(tracking.secret, {
    projectId: tracking.projectId,
    mailingId: tracking.mailingId,
    deliveryId: stamp.deliveryId,
    sentAt: stamp.sentAt,
  });
  const prefix = `${tracking.baseUrl}/t/c/${signer.head}`;
  // Marked spans: [start, end, href, replacement] with the replacement, for Liquid links, the index and
  // the group of links with the same values, whose suffix is signed once all spans are known.
  const spans: Array<{
    start: number;
    end: number;
    href: string;
    fixed?: string;
    group?: ValueGroup;
    at?: string;
  }> = [];
  let groups: Map<string, ValueGroup> | undefined;
  for (let at = 0; ; ) {
    const start = rendered.indexOf(open, at);
    if (start < 0) break;
    const mid = rendered.indexOf('\x02', start + open.length);
    const end = mid < 0 ? -1 : rendered.indexOf(close, mid);
    if (end < 0) break;
    at = end + close.length;
    const index36 = rendered.slice(start + open.length, mid);
    const index = Number.parseInt(index36, 36);
    const href = rendered.slice(mid + 1, end);
    const shape = shapes[index];
    const span: (typeof spans)[number] = { start, end: at, href };
    spans.push(span);
    if (shape === undefined) continue;
    if (shape === null) {
      span.fixed = `${prefix}${index36}${signer.fixedSuffix}`;
      continue;
    }
    const values = trackableValues(shape, rendered, mid + 1, end);
    if (values === undefined) continue;
    const key = values.length === 1 ? (values[0] as string) : values.join('\u0000');
    groups ??= new Map();
    let group = groups.get(key);
    if (group === undefined) {
      group = { values, indexes: [], suffix: '' };
      groups.set(key, group);
    }
    if (!group.indexes.includes(index)) group.indexes.push(index);
    span.group = group;
    span.at = `${prefix}${index36}`;
  }
  if (groups)
    for (const group of groups.values()) group.suffix = signer.valuesSuffix(group.values, group.indexes);
  // Joined, not concatenated: the page comes out flat, holding no slice of the rendered one (which
  // would keep both alive, in-flight messages twice their size, until the message is encoded).
  const parts: string[] = [];
  let at = 0;
  for (const span of spans) {
    parts.push(
      rendered.slice(at, span.start),
      span.fixed ?? (span.group ? `${span.at}${span.group.suffix}` : span.href),
    );
    at = span.end;
  }
  const plain = () => {
    let out = '';
    let from = 0;
    for (const span of spans) {
      out += rendered.slice(from, span.start) + span.href;
      from = span.end;
    }
    return out + rendered.slice(from);
  };
  const tail = rendered.slice(at);
  if (!tracking.opens) parts.push(tail);
  else {
    // The pixel goes before the last `</body>` (after the last link, so within the tail), or at the end.
    const img = `<img src="${tracking.baseUrl}/t/o/${signer.open}.gif" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0" />`;
    const body = Math.max(tail.lastIndexOf('</body'), tail.lastIndexOf('</BODY'));
    if (body < 0) parts.push(tail, img);
    else parts.push(tail.slice(0, body), img, tail.slice(body));
  }
  return { html: parts.join(''), plain };
}

/** Liquid links of one message that rendered the same values: one signature for all of them. */
interface ValueGroup {
  values: string[];
  indexes: number[];
  suffix: string;
}

/**
 * How a Liquid link map entry's rendered `href` is made: its static text as written (attribute-encoded),
 * with a rendered value between each two. An entry with only output tags (`{{ }}`, no whitespace
 * control) has its text between them; one with a tag (`{% %}`) or whitespace control is a single value
 * (the whole rendered `href`). Derived from the entry alone, the same at send and at click time.
 */
export interface LinkShape {
  /** The static parts, attribute-encoded as written; one more than the values. */
  statics: string[];
  /**
   * Whether a recipient's URL can be checked from the static parts and the values alone (no value with
   * `&`): every `&` of a static part starts a complete character reference, the first part fixes the
   * scheme (`https://host...`), no part mentions unsubscribe, and the parts between values are long
   * enough that an `unsubscribe` made with a value lies within the value and its neighbours' ends.
   */
  checkable: boolean;
  /**
   * For value `i`: the end of the decoded part before it and the start of the one after it that could
   * make `unsubscribe` with it (the longest that is a start, resp. an end, of the word).
   */
  around: Array<[string, string]>;
}

const UNSUBSCRIBE = 'unsubscribe';

/** The shape of a link map entry: null for a fixed one (see {@link LinkShape}). */
export function linkShape(source: string): LinkShape | null {
  if (!hasLiquid(source)) return null;
  const statics =
    source.includes('{%') || /\{\{-|-\}\}/.test(source) ? ['', ''] : source.split(/\{\{[\s\S]*?\}\}/);
  const decoded = statics.map((s) => (s.includes('&') ? decodeHTMLAttribute(s) : s).toLowerCase());
  const reach = UNSUBSCRIBE.length - 1;
  const checkable =
    statics.every((s) => !/&(?![A-Za-z0-9#]+;)/.test(s)) &&
    /^https?:\/\/[^\s]/.test((decoded[0] as string).trimStart()) &&
    decoded.every(
      (d, i) => !d.includes(UNSUBSCRIBE) && (i === 0 || i === decoded.length - 1 || d.length >= reach),
    );
  const around = decoded.slice(1).map((after, i): [string, string] => {
    const before = decoded[i] as string;
    let left = '';
    let right = '';
    for (let k = 1; k <= reach; k++) {
      if (before.endsWith(UNSUBSCRIBE.slice(0, k))) left = before.slice(-k);
      if (after.startsWith(UNSUBSCRIBE.slice(-k))) right = after.slice(0, k);
    }
    return [left, right];
  });
  return { statics, checkable, around };
}

/**
 * The values of a Liquid link's rendered `href`, if its URL is trackable (http(s), no unsubscribe link,
 * short enough), else undefined (the link stays as rendered). Any split that puts the `href` back together
 * will do: the click rebuilds the same text.
 */
function trackableValues(shape: LinkShape, page: string, from: number, to: number): string[] | undefined {
  // Positions in the flat page rather than a slice of it: `startsWith` on a sliced string is slow.
  if (to - from > MAX_TOKEN_URL_LENGTH) return undefined;
  const { statics } = shape;
  const last = statics.length - 1;
  const first = statics[0] as string;
  const end = statics[last] as string;
  const valuesEnd = to - end.length;
  // indexOf at the position rather than startsWith: much faster on a long page in V8 12.
  if (
    valuesEnd < from + first.length ||
    page.indexOf(first, from) !== from ||
    page.indexOf(end, valuesEnd) !== valuesEnd
  ) {
    return undefined;
  }
  const values: string[] = [];
  let pos = from + first.length;
  for (let i = 1; i <= last; i++) {
    const next = i < last ? page.indexOf(statics[i] as string, pos) : valuesEnd;
    if (next < pos || next + (i < last ? (statics[i] as string).length : 0) > valuesEnd) return undefined;
    values.push(page.slice(pos, next));
    pos = next + (statics[i] as string).length;
  }
  if (shape.checkable && values.every((v) => !v.includes('&'))) {
    // Only a value with the text around it can make an unsubscribe link (see `LinkShape`).
    for (let i = 0; i < values.length; i++) {
      const [left, right] = shape.around[i] as [string, string];
      const value = values[i] as string;
      if (left.length + value.length + right.length < UNSUBSCRIBE.length) continue;
      if (`${left}${value}${right}`.toLowerCase().includes(UNSUBSCRIBE)) return undefined;
    }
    return values;
  }
  // A value's character reference (or one split across a value and the text around it) is decoded as
  // the browser would, from the whole href.
  return isTrackableUrl(decodeHTMLAttribute(page.slice(from, to)).trim()) ? values : undefined;
}

/**
 * Where a verified click token goes: the fixed URL of its link map entry, or for a Liquid entry the
 * entry's static text with the token's values; undefined (a 404) when the token's kind does not match the
 * entry's, the index is out of range, or the URL is not a trackable one.
 */
export function clickDestination(
  links: readonly string[],
  index: number,
  values: readonly string[] | undefined,
): string | undefined {
  const source = links[index];
  if (source === undefined) return undefined;
  const url = values === undefined ? fixedLinkUrl(source) : liquidLinkUrl(source, values);
  return url !== undefined && isTrackableUrl(url) ? url : undefined;
}

/** The URL a click on a Liquid link entry goes to, from its token's values, or undefined. */
function liquidLinkUrl(source: string, values: readonly string[]): string | undefined {
  const shape = linkShape(source);
  if (shape === null || values.length !== shape.statics.length - 1) return undefined;
  let href = shape.statics[0] as string;
  for (let i = 0; i < values.length; i++) href += (values[i] as string) + (shape.statics[i + 1] as string);
  const url = decodeHTMLAttribute(href).trim();
  return isTrackableUrl(url) && href.length <= MAX_TOKEN_URL_LENGTH ? url : undefined;
}

/** Whether a template `href` is a link to track: http(s) as written, or Liquid whose result decides. */
function isTrackableSource(source: string): boolean {
  const value = source.trim();
  // The preference centre's link is the contact's own page: not counted as a click, shown as it is.
  if (/unsubscribe|preferences_url/i.test(value)) return false;
  if (value.startsWith('{{') || value.startsWith('{%')) return true;
  return isTrackableUrl(decodeHTMLAttribute(value));
}

/** An absolute http(s) URL that is not an unsubscribe link. */
export function isTrackableUrl(url: string): boolean {
  return /^https?:\/\/[^\s]/i.test(url) && !/unsubscribe/i.test(url);
}

/** Whether a link map entry holds Liquid (its URL is the recipient's, carried in the token). */
export function hasLiquid(source: string): boolean {
  return source.includes('{{') || source.includes('{%');
}

/** A link map entry as the browser reads the attribute (a Liquid one keeps its Liquid: a label). */
export function linkLabel(source: string): string {
  return decodeHTMLAttribute(source).trim();
}

/** The URL of a fixed link map entry, or undefined for a Liquid one (the recipient's URL is in the token). */
export function fixedLinkUrl(source: string): string | undefined {
  return hasLiquid(source) ? undefined : linkLabel(source);
}
