import { randomBytes } from 'node:crypto';
import { decodeHTMLAttribute } from 'entities';
import { Tokenizer } from 'htmlparser2';
import type { ContentSnapshot } from '../records.js';
import { type ClickSigner, clickSigner, MAX_TOKEN_URL_LENGTH, signOpenToken } from '../tracking-token.js';
import { parseLiquid } from './parse-liquid.js';
import type { PreparedContent } from './prepare-content.js';

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
}

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
 * `data-mailroom-notrack` and unsubscribe links (an `href` that mentions `unsubscribe`: a scanner must not
 * be counted as clicking it, and the recipient should see where it goes). `mailto:`, `tel:`, anchors and
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
 * A mailing's content prepared with tracking: `prepare` (the usual preparation, text derived from the
 * UNtracked HTML) runs on the content as it is, then the HTML template alone is replaced by its marked
 * version, and the tracking rides along for `renderDelivery`. Without `setup`, or for text-only content,
 * the plain preparation.
 */
export function prepareTracked(
  content: ContentSnapshot,
  setup: TrackingSetup | null | undefined,
  prepare: (content: ContentSnapshot) => PreparedContent,
): PreparedContent {
  const prepared = prepare(content);
  if (!setup || content.html === null || prepared.html === null || !(setup.opens || setup.clicks)) {
    return prepared;
  }
  const nonce = randomBytes(9).toString('base64url');
  const tracking: PreparedTracking = { ...setup, open: `\x01${nonce}`, close: `\x03${nonce}` };
  const marked = setup.clicks ? markLinks(content.html, setup.links, tracking) : null;
  const html = marked === null ? prepared.html : parseLiquid('html', marked, 'html');
  // Opted in: the text is derived per recipient from the tracked HTML, links and all (no text template
  // or text variants made from the untracked HTML).
  if (setup.textLinks && content.text === null) {
    const { textVariants: _untracked, ...rest } = prepared;
    return { ...rest, html, text: null, tracking };
  }
  return { ...prepared, html, tracking };
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
 * added, and (when `wantPlain`) the same HTML without tracking, for the text part. One scan for the
 * markers.
 */
export function applyTracking(
  tracking: PreparedTracking,
  rendered: string,
  stamp: TrackingStamp,
  wantPlain = true,
): { html: string; plain: string } {
  let html = '';
  let plain = '';
  let at = 0;
  const { open, close } = tracking;
  let sign: ClickSigner | undefined;
  for (;;) {
    const start = rendered.indexOf(open, at);
    if (start < 0) break;
    const mid = rendered.indexOf('\x02', start + open.length);
    const end = mid < 0 ? -1 : rendered.indexOf(close, mid);
    if (end < 0) break;
    const index = Number.parseInt(rendered.slice(start + open.length, mid), 36);
    const href = rendered.slice(mid + 1, end);
    const before = rendered.slice(at, start);
    sign ??= clickSigner(tracking.secret, {
      projectId: tracking.projectId,
      mailingId: tracking.mailingId,
      deliveryId: stamp.deliveryId,
      sentAt: stamp.sentAt,
    });
    html += before + trackedHref(tracking, sign, index, href);
    if (wantPlain) plain += before + href;
    at = end + close.length;
  }
  const tail = rendered.slice(at);
  if (wantPlain) plain += tail;
  if (!tracking.opens) return { html: html + tail, plain };
  // The pixel goes before the last `</body>` (after the last link, so within the tail), or at the end.
  const img = `<img src="${pixelUrl(tracking, stamp)}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0" />`;
  const body = Math.max(tail.lastIndexOf('</body'), tail.lastIndexOf('</BODY'));
  html += body < 0 ? tail + img : tail.slice(0, body) + img + tail.slice(body);
  return { html, plain };
}

function trackedHref(tracking: PreparedTracking, sign: ClickSigner, index: number, href: string): string {
  const source = tracking.links[index];
  if (source === undefined) return href;
  if (!hasLiquid(source)) return `${tracking.baseUrl}/t/c/${sign(index)}`;
  // Liquid in the href: this recipient's URL, checked like a fixed one, travels in the token.
  const url = (href.includes('&') ? decodeHTMLAttribute(href) : href).trim();
  if (!isTrackableUrl(url) || url.length > MAX_TOKEN_URL_LENGTH) return href;
  return `${tracking.baseUrl}/t/c/${sign(index, url)}`;
}

function pixelUrl(tracking: PreparedTracking, stamp: TrackingStamp): string {
  const token = signOpenToken(tracking.secret, {
    projectId: tracking.projectId,
    mailingId: tracking.mailingId,
    deliveryId: stamp.deliveryId,
    sentAt: stamp.sentAt,
  });
  return `${tracking.baseUrl}/t/o/${token}.gif`;
}

/** Whether a template `href` is a link to track: http(s) as written, or Liquid whose result decides. */
function isTrackableSource(source: string): boolean {
  const value = source.trim();
  if (/unsubscribe/i.test(value)) return false;
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
