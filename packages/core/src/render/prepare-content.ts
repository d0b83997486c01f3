import type { Template } from 'liquidjs';
import type { ContentSnapshot, Variables } from '../store/records.js';
import { RENDER_LIMIT_DEFAULTS } from './liquid-engine.js';
import { parseLiquid } from './parse-liquid.js';

/** Options of {@link prepareContent}. */
export interface PrepareContentOptions {
  /**
   * A missing variable fails the render with `RENDER_FAILED` naming it (`undefined variable: firstName`),
   * instead of rendering empty. `{{ x | default: "y" }}` and `{% if x %}` still work on a missing `x`.
   * @default false
   */
  strictVariables?: boolean;
  /** Longest time one part may render, in milliseconds. @default 1000 */
  renderLimitMs?: number;
  /** Allocation budget of one part render, in liquidjs units (about characters). @default 20_000_000 */
  memoryLimit?: number;
}

/** The per-render options handed to liquidjs, built once per mailing. */
export interface PreparedRenderOptions {
  /** A missing variable fails the render. */
  readonly strictVariables: boolean;
  /** Longest render of one part, in milliseconds. */
  readonly renderLimit: number;
  /** Allocation budget of one part render. */
  readonly memoryLimit: number;
}

/**
 * The text part of a content whose markup depends on a few outputs (a colour or `display` value in a
 * `style` attribute): a text template per distinct rendered value of them, derived on first use.
 */
export interface TextVariants {
  /** The outputs the text depends on, parsed with the HTML engine (each renders alone). */
  readonly pins: readonly Template[][];
  /**
   * The text template for these rendered values of `pins`, or null: convert the recipient's HTML.
   */
  variant(values: readonly string[]): Template[] | null;
}

/**
 * A mailing's content parsed once, to be rendered for each recipient by `renderDelivery`. Treat it as
 * opaque: it holds liquidjs parse trees, valid only with the engines that made them.
 */
export interface PreparedContent {
  /** Parsed with the text engine; rendered on one line. */
  readonly subject: Template[];
  /** Parsed with the text engine; null when the content has none. */
  readonly preheader: Template[] | null;
  /** Parsed with the HTML engine: every output is HTML-escaped. */
  readonly html: Template[] | null;
  /** Null when the text part is to be derived from the rendered HTML. */
  readonly text: Template[] | null;
  /** Without `text`: the text derived per value of a few outputs, if the content allows (else converted). */
  readonly textVariants?: TextVariants;
  /** The global variables, fallback of every recipient's own. */
  readonly variables: Variables;
  /** Options of every render of this content. */
  readonly renderOptions: PreparedRenderOptions;
}

/**
 * Parses every Liquid source of a content snapshot (subject, preheader, HTML, text) once. Call it once per
 * mailing and reuse the result for every recipient: a parse costs about twenty renders. Accept code may
 * also call it to refuse a request whose subject, preheader or message is not valid Liquid.
 *
 * @throws MailroomError `TEMPLATE_INVALID` naming the part and line that do not parse (including the file
 * tags `include`/`render`/`layout` and unknown filters).
 * @example
 * const prepared = prepareContent(mailing.content, { strictVariables });
 * const rendered = claimed.map((delivery) => renderDelivery(prepared, delivery));
 */
export function prepareContent(
  content: ContentSnapshot,
  options: PrepareContentOptions = {},
): PreparedContent {
  return {
    subject: parseLiquid('text', content.subject, 'subject'),
    preheader: content.preheader ? parseLiquid('text', content.preheader, 'preheader') : null,
    html: content.html === null ? null : parseLiquid('html', content.html, 'html'),
    text: content.text === null ? null : parseLiquid('text', content.text, 'text'),
    variables: content.variables,
    renderOptions: {
      strictVariables: options.strictVariables ?? false,
      renderLimit: options.renderLimitMs ?? RENDER_LIMIT_DEFAULTS.renderLimitMs,
      memoryLimit: options.memoryLimit ?? RENDER_LIMIT_DEFAULTS.memoryLimit,
    },
  };
}
