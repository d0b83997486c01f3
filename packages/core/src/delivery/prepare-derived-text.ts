import type { Template } from 'liquidjs';
import { htmlToText } from '../render/html-to-text.js';
import { createLiquidEngine } from '../render/liquid-engine.js';
import { parseLiquid, parseLiquidWith } from '../render/parse-liquid.js';
import {
  type PrepareContentOptions,
  type PreparedContent,
  prepareContent,
  type TextVariants,
} from '../render/prepare-content.js';
import type { ContentSnapshot } from '../store/records.js';
import { FRAGMENT_FILTER, planTextDerivation, type TextPlan } from './derived-text.js';

/** The text engine plus the fragment filter of `raw` outputs: parses derived text templates only. */
const derivedEngine = createLiquidEngine('text');
derivedEngine.registerFilter(FRAGMENT_FILTER, (value: unknown) => htmlToText(String(value ?? '')));

/**
 * Texts derived for distinct values of the pinned outputs, at most: past that, the values vary per
 * recipient (an id in a `style` attribute) and a derivation per recipient would cost more than the
 * conversion it replaces, so new values convert each recipient's HTML.
 */
const MAX_VARIANTS = 32;

/**
 * Prepares a mailing's content for its recipients (see `prepareContent`) with its text part derived once
 * (see `deriveTextSource`) when it has HTML, no text of its own, and the derivation is safe; when a few
 * outputs can change the markup (see `planTextDerivation`), once per distinct value of them; otherwise
 * the text is converted from each recipient's HTML when it renders. A content without any Liquid is the
 * same for everyone: its text is converted here once too.
 *
 * @throws MailroomError `TEMPLATE_INVALID` as `prepareContent` does.
 */
export function prepareWithDerivedText(
  content: ContentSnapshot,
  options: PrepareContentOptions = {},
): PreparedContent {
  const prepared = prepareContent(content, options);
  if (content.html === null || content.text !== null) return prepared;
  if (!content.html.includes('{{') && !content.html.includes('{%')) {
    // The text is parsed as Liquid too: a literal `{{` that the conversion decoded must not become code.
    const text = htmlToText(content.html);
    if (text.includes('{{') || text.includes('{%')) return prepared;
    return { ...prepared, text: parseLiquid('text', text, 'derived text') };
  }
  const plan = planTextDerivation(content.html);
  if (plan === null) return prepared;
  if (plan.pins.length === 0) {
    const text = plan.derive([]);
    return text === null ? prepared : { ...prepared, text: parseDerived(text) };
  }
  return { ...prepared, textVariants: textVariants(plan) };
}

function parseDerived(text: string): Template[] {
  return parseLiquidWith(derivedEngine, text, 'derived text');
}

function textVariants(plan: TextPlan): TextVariants {
  const variants = new Map<string, Template[] | null>();
  return {
    pins: plan.pins.map((pin) => parseLiquid('html', pin, 'html')),
    variant(values) {
      const key = values.join('\u0000');
      const found = variants.get(key);
      if (found !== undefined || variants.has(key)) return found ?? null;
      if (variants.size >= MAX_VARIANTS) return null;
      const text = plan.derive(values);
      const parsed = text === null ? null : parseDerived(text);
      variants.set(key, parsed);
      return parsed;
    },
  };
}
