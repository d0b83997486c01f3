import type { ContentSnapshot } from '../records.js';
import { htmlToText } from '../render/text.js';

const OUTPUT = /\{\{[\s\S]*?\}\}/g;
const MARK = 'qzx';

/**
 * The text part of an HTML mailing without its own, as one Liquid template derived once per mailing,
 * or null when that is not safe and the text must be derived from each recipient's rendered HTML.
 *
 * Deriving text from a 38 KB page costs about 1.5 ms per recipient; rendering a derived text template
 * costs a few microseconds. The HTML source is converted once with every `{{ output }}` replaced by a
 * marker, and the markers are then put back as the outputs. Safe means the words come out the same for
 * every recipient, which holds only when:
 * - there is no `{% tag %}` (a condition or loop may span markup) and no whitespace control (`{{-`);
 * - no output uses `raw` (its markup would be converted per recipient, but kept verbatim here);
 * - every output survives the conversion exactly once (none sits in an attribute or a block that the
 *   conversion drops, such as an image's `alt` or a hidden preview);
 * - the converted text contains no Liquid of its own (a literal `{{` written as entities).
 * Line wrapping may differ from the per-recipient conversion: a marker is not as long as the value.
 */
export function deriveTextSource(html: string): string | null {
  if (html.includes('{%') || html.includes(MARK)) return null;
  const outputs: string[] = [];
  let unsafe = false;
  const marked = html.replace(OUTPUT, (output) => {
    if (/^\{\{-|-\}\}$|\|\s*raw\b/.test(output)) unsafe = true;
    outputs.push(output);
    return `${MARK}${outputs.length - 1}${MARK}`;
  });
  if (unsafe || outputs.length === 0) return null;
  const text = htmlToText(marked);
  if (text.includes('{{') || text.includes('{%')) return null;
  const seen = new Array<number>(outputs.length).fill(0);
  const derived = text.replace(new RegExp(`${MARK}(\\d+)${MARK}`, 'g'), (_, index: string) => {
    const i = Number(index);
    seen[i] = (seen[i] ?? 0) + 1;
    return outputs[i] ?? '';
  });
  return seen.every((n) => n === 1) ? derived : null;
}

/**
 * The content with its text part derived once (see {@link deriveTextSource}) when it has HTML, no text
 * of its own, and the derivation is safe; otherwise the content as it is. A content without any output
 * is the same for everyone: its text is derived here once too.
 */
export function withDerivedText(content: ContentSnapshot): ContentSnapshot {
  if (content.html === null || content.text !== null) return content;
  if (!content.html.includes('{{') && !content.html.includes('{%')) {
    // The text is parsed as Liquid too: a literal `{{` that the conversion decoded must not become code.
    const text = htmlToText(content.html);
    return text.includes('{{') || text.includes('{%') ? content : { ...content, text };
  }
  const text = deriveTextSource(content.html);
  return text === null ? content : { ...content, text };
}
