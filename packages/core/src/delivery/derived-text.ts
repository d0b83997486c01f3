import { type TagToken, Tokenizer, TokenKind, type TopLevelToken } from 'liquidjs';
import { htmlToText } from '../render/html-to-text.js';

/**
 * The filter a derived text template prints a `raw` output through: the value is markup, converted on its
 * own (a few microseconds for a content block) instead of the whole page. Registered only on the engine
 * that parses derived text (`prepare-derived-text.ts`), so no user template can name it.
 */
export const FRAGMENT_FILTER = 'mailroom_fragment_text';

/** Markers stand for Liquid tokens during the conversion: letters and digits, which it keeps verbatim. */
const MARK_OPEN = 'lqmk';
const MARK_CLOSE = 'kmql';
const MARKS = new RegExp(`${MARK_OPEN}(\\d+)${MARK_CLOSE}`, 'gi');
/** A line made only of tag markers (and spaces): the tags of a block that wraps whole blocks of text. */
const TAG_LINE = new RegExp(`(?<=^|\\n)((?:${MARK_OPEN}\\d+${MARK_CLOSE} ?)+)\\n+`, 'g');

/** Tags opening a block, by their closing tag; `else`/`elsif`/`when` sit inside one. */
const BLOCKS: Readonly<Record<string, string>> = {
  if: 'endif',
  unless: 'endunless',
  for: 'endfor',
  case: 'endcase',
  tablerow: 'endtablerow',
  comment: 'endcomment',
};
const BRANCHES = new Set(['else', 'elsif', 'when']);
/** Tags the derivation does not handle: their content is markup (`raw`, `capture`) or hidden state. */
const REFUSED = new Set(['raw', 'capture', 'liquid']);
/** Tags whose effect outlives their place: dropping them with the markup around them would change the rest. */
const STATEFUL = new Set(['assign', 'increment', 'decrement', 'cycle']);
/** Filters whose result the HTML engine does not escape again: in text they would print entities. */
const UNSAFE_OUTPUT = /\|\s*(?:raw|escape|escape_once|xml_escape)\b/;
/** An output printed as markup: `raw` last, every filter before it applied to the value. */
const RAW_OUTPUT = /\|\s*raw\s*$/;
/** An attribute value being written, at the end of a tag's text so far: its name and its opening quote. */
const OPEN_ATTRIBUTE = /\s([^\s"'=<>/]+)\s*=\s*(?:"[^"]*|'[^']*)$/;

/** One Liquid output or tag of the source, as the derivation tracks it. */
interface Slot {
  kind: 'output' | 'tag';
  /** The token as the text template writes it (whitespace control removed: the conversion did it). */
  source: string;
  /** Tags: the tag name. */
  name: string;
  /** Tags: index of the first tag of its block (the opening one), in `tags`. */
  block: number;
  /** Tags: index of the block's last tag (its closing one). */
  blockEnd: number;
  /** Position of the tag in `tags`, or for an output the number of tags before it. */
  order: number;
  /** An output printed `raw` (its value is markup): it may only sit in text. */
  raw?: boolean;
  /** Outputs: printed through an escaping filter (its entities would print in text): pinned. */
  escaped?: boolean;
  /** Outputs: the output as the HTML source has it, for rendering it alone when it is pinned. */
  original?: string;
  /** Outputs: the blocks open around it (a pinned output must have none: it renders alone). */
  depth?: number;
}

/**
 * How the text part of an HTML source is derived. Outputs that could change the markup (in a `style`
 * attribute or outside a quoted attribute value, escaped by a filter, `raw` in an attribute) are pinned:
 * the text is derived for the rendered values of those, and depends on nothing else.
 */
export interface TextPlan {
  /** The pinned outputs, as Liquid sources for the HTML engine; empty when one text serves every value. */
  readonly pins: readonly string[];
  /**
   * The text part as a Liquid source (to parse with the derived-text engine) for these rendered values of
   * `pins`, or null when it cannot be derived for them: convert each recipient's HTML then.
   */
  derive(values: readonly string[]): string | null;
}

/**
 * The text part of an HTML mailing without its own, as one Liquid template derived once per mailing,
 * or null when one template cannot serve every recipient (see {@link planTextDerivation} for the
 * derivation per value of a few outputs, and the per-recipient conversion as the last resort).
 *
 * Deriving text from each recipient's page costs far more than rendering a derived text template
 * (BENCHMARKS.md, delivery-corpus, "The text part"). The source is converted once with every Liquid
 * output and tag replaced by a marker that the conversion keeps verbatim; the text is then a Liquid
 * template again, the markers put back as the outputs and tags they stand for. Variables are data (the
 * HTML engine escapes them), so they cannot change the markup: the words come out the same as converting
 * each recipient's HTML when
 * - an output sits in text, in a quoted attribute value other than `style` (a link's `href` prints as
 *   `[url]`), or in something the conversion drops (a hidden preheader, an image's `alt`, the head);
 *   an output may print several times (a link's text and its URL) or not at all;
 * - every tag prints in source order, and a tag the conversion drops takes its whole block with it
 *   (`{% if %}` to `{% endif %}` and all between, as in a hidden preheader); a dropped tag is not
 *   stateful (`assign`, `cycle`...); no `raw`, `capture` or `liquid` tag, and no tag in a tag's markup;
 * - every output stays between the same tags (a loop variable stays in its loop);
 * - no output goes through an escaping filter (the text would print its entities), and an output printed
 *   `raw` (markup, such as a content block from a CMS) sits in text: its value is converted on its own
 *   when the text renders, a few microseconds for a block instead of the whole page; the words match
 *   while its markup is balanced (an unclosed `<div style="display:none">` would hide the rest of the
 *   page per recipient, not here);
 * - the converted text contains no Liquid of its own (a literal `{{` written as entities), and the source
 *   no `<pre>` (whose whitespace the conversion keeps).
 *
 * Whitespace may differ from the per-recipient conversion: lines wrap by the markers' length, not the
 * values', and a block tag alone on its line takes the line break after it away. Two more differences,
 * both for values that are not plain data: a link whose whole URL is a variable prints `[url]` even when
 * the value is empty, `#...` or `mailto:...` (the conversion would drop or shorten it), and a link whose
 * text equals its URL only for some recipients prints the URL for them too.
 */
export function deriveTextSource(html: string): string | null {
  const plan = planTextDerivation(html);
  return plan !== null && plan.pins.length === 0 ? plan.derive([]) : null;
}

/**
 * The plan of {@link deriveTextSource} for any HTML source: the text derived once when no output can
 * change the markup; else, when each such output stands outside any block (it renders alone), the text
 * derived per distinct rendered value of them (a colour, a `display` value: few for a whole broadcast);
 * null when the text must be converted from each recipient's HTML.
 */
export function planTextDerivation(html: string): TextPlan | null {
  const lower = html.toLowerCase();
  if (lower.includes(MARK_OPEN) || lower.includes(MARK_CLOSE) || /<pre[\s>]/.test(lower)) return null;
  const marked = markTokens(html);
  if (marked === null) return null;
  const pinned = misplacedMarkers(marked.html, marked.slots);
  if (pinned === null) return null;
  marked.slots.forEach((slot, i) => {
    if (slot.escaped) pinned.add(i);
  });
  const pins = [...pinned];
  if (pins.some((i) => (marked.slots[i] as Slot).depth !== 0)) return null;
  return {
    pins: pins.map((i) => (marked.slots[i] as Slot).original as string),
    derive(values) {
      if (values.some((v) => v.toLowerCase().includes(MARK_OPEN) || v.toLowerCase().includes(MARK_CLOSE))) {
        return null;
      }
      const byIndex = new Map(pins.map((index, k) => [index, values[k] ?? '']));
      const source =
        pins.length === 0
          ? marked.html
          : marked.html.replace(MARKS, (m, i: string) => byIndex.get(Number(i)) ?? m);
      return deriveMarked(source, marked);
    },
  };
}

/** The text template of a marked source (pinned outputs already replaced by their values), or null. */
function deriveMarked(html: string, marked: Marked): string | null {
  const { slots, tags } = marked;
  const text = htmlToText(html);
  if (text.includes('{{') || text.includes('{%')) return null;

  // Where each marker landed, in the order of the text.
  const found: number[] = [];
  for (const match of text.matchAll(MARKS)) {
    if (match[0] !== match[0].toLowerCase()) return null; // the conversion changed its case: a transform ran
    found.push(Number(match[1]));
  }
  const tagSeen = new Array<boolean>(tags.length).fill(false);
  let lastTag = -1;
  for (const index of found) {
    const slot = slots[index];
    if (slot === undefined) return null;
    if (slot.kind === 'tag') {
      if (slot.order <= lastTag) return null; // out of order, or printed twice
      lastTag = slot.order;
      tagSeen[slot.order] = true;
    }
  }
  if (!droppedTagsSafe(tags, tagSeen, slots, found)) return null;
  // Each output must print after the same surviving tag as in the source (dropped tags do not count).
  const lastSurviving = (order: number): number => {
    let i = order - 1;
    while (i >= 0 && !tagSeen[i]) i--;
    return i;
  };
  lastTag = -1;
  for (const index of found) {
    const slot = slots[index] as Slot;
    if (slot.kind === 'tag') lastTag = slot.order;
    else if (lastSurviving(slot.order) !== lastTag) return null;
  }

  const onlyTags = (markers: string): boolean =>
    [...markers.matchAll(MARKS)].every((m) => slots[Number(m[1])]?.kind === 'tag');
  return text
    .replace(TAG_LINE, (line, markers: string) => (onlyTags(markers) ? markers.trimEnd() : line))
    .replace(MARKS, (_, index: string) => (slots[Number(index)] as Slot).source);
}

interface Marked {
  html: string;
  /** Every output and tag, by marker index. */
  slots: Slot[];
  /** The tag slots, in source order. */
  tags: Slot[];
}

/** The source with each Liquid token replaced by its marker; null when a token is one the derivation refuses. */
function markTokens(html: string): Marked | null {
  let tokens: TopLevelToken[];
  try {
    tokens = new Tokenizer(html).readTopLevelTokens();
  } catch {
    return null;
  }
  const slots: Slot[] = [];
  const tags: Slot[] = [];
  const open: number[] = [];
  // An output repeated between the same tags shares its marker: a link whose text is its URL stays one.
  const outputs = new Map<string, number>();
  let out = '';
  for (const token of tokens) {
    if (token.kind === TokenKind.HTML) {
      out += (token as unknown as { getContent(): string }).getContent();
      continue;
    }
    const content = (token as unknown as { content: string }).content.trim();
    if (token.kind === TokenKind.Output) {
      const raw = RAW_OUTPUT.test(content);
      const expression = raw ? content.replace(RAW_OUTPUT, `| ${FRAGMENT_FILTER}`) : content;
      const key = `${tags.length}\n${content}`;
      let index = outputs.get(key);
      if (index === undefined) {
        index = slots.length;
        outputs.set(key, index);
        slots.push({
          kind: 'output',
          source: `{{ ${expression} }}`,
          name: '',
          block: -1,
          blockEnd: -1,
          order: tags.length,
          raw,
          escaped: UNSAFE_OUTPUT.test(expression),
          original: `{{ ${content} }}`,
          depth: open.length,
        });
      }
      out += marker(index);
      continue;
    }
    if (token.kind !== TokenKind.Tag) return null;
    const name = (token as TagToken).name;
    if (REFUSED.has(name)) return null;
    const order = tags.length;
    const slot: Slot = {
      kind: 'tag',
      source: `{% ${content} %}`,
      name,
      block: order,
      blockEnd: order,
      order,
    };
    if (name in BLOCKS) {
      open.push(order);
    } else if (BRANCHES.has(name) || name.startsWith('end')) {
      const start = open.at(-1);
      if (start === undefined) return null;
      slot.block = start;
      if (name.startsWith('end')) {
        if (BLOCKS[(tags[start] as Slot).name] !== name) return null;
        open.pop();
        for (let i = start; i <= order - 1; i++)
          if ((tags[i] as Slot).block === start) (tags[i] as Slot).blockEnd = order;
        slot.blockEnd = order;
      }
    }
    tags.push(slot);
    slots.push(slot);
    out += marker(slots.length - 1);
  }
  if (open.length > 0) return null;
  return { html: out, slots, tags };
}

function marker(index: number): string {
  return `${MARK_OPEN}${index}${MARK_CLOSE}`;
}

/**
 * The outputs whose marker sits in a tag's markup elsewhere than in a quoted attribute value other than
 * `style` (whose `display:none` decides what the conversion drops), or is printed `raw` in an attribute
 * (its markup could end the attribute): their values can change the markup. Markers in text or in a
 * comment (dropped) are in place. Null when a tag sits in the markup (`<a {% if %}...>`).
 */
function misplacedMarkers(html: string, slots: Slot[]): Set<number> | null {
  const misplaced = new Set<number>();
  for (const match of html.matchAll(MARKS)) {
    const at = match.index;
    const lt = html.lastIndexOf('<', at);
    if (lt < 0 || html.lastIndexOf('>', at) > lt) continue; // in text
    if (html.startsWith('<!--', lt)) continue; // in a comment
    const index = Number(match[1]);
    const slot = slots[index] as Slot;
    const attribute = OPEN_ATTRIBUTE.exec(html.slice(lt, at));
    if (attribute !== null && (attribute[1] as string).toLowerCase() !== 'style' && !slot.raw) continue;
    if (slot.kind === 'tag') return null;
    misplaced.add(index);
  }
  return misplaced;
}

/**
 * Tags the conversion dropped are harmless when each takes its whole block along (every tag of the
 * block, and every marker between its first and last tag), and none is stateful.
 */
function droppedTagsSafe(tags: Slot[], seen: boolean[], slots: Slot[], found: number[]): boolean {
  const survivingOutputs = new Set(found.filter((i) => slots[i]?.kind === 'output'));
  for (const tag of tags) {
    if (seen[tag.order]) continue;
    if (STATEFUL.has(tag.name)) return false;
    const first = tag.block;
    const last = tag.blockEnd;
    for (let i = first; i <= last; i++) if (seen[i]) return false;
    // Outputs whose last preceding tag lies inside the dropped block sit inside it.
    for (const index of survivingOutputs) {
      const output = slots[index] as Slot;
      if (output.order > first && output.order <= last) return false;
    }
  }
  return true;
}
