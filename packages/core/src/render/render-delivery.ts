import type { Liquid, Template } from 'liquidjs';
import type { RenderedContent } from '../store/records.js';
import type { HtmlRewrite } from './html-rewrite.js';
import { htmlToText } from './html-to-text.js';
import { liquidEngines } from './liquid-engine.js';
import { liquidFailure } from './liquid-error.js';
import { insertPreheader } from './preheader.js';
import type { PreparedContent, PreparedRenderOptions } from './prepare-content.js';
import { buildScope, type RenderRecipient } from './recipient-scope.js';
import { singleLine } from './single-line.js';

/**
 * Renders a prepared content for one recipient, synchronously (no parsing happens here).
 *
 * - Scope: the global variables, overridden by the recipient's own; `recipient` and `profile` hold
 *   `{ address, name, firstName, lastName, ...traits }`. Variables are data: their values are never
 *   parsed as Liquid.
 * - HTML outputs are HTML-escaped (`| raw` opts out; a `{% capture %}` already escaped its outputs, so
 *   print it with `| raw`); subject and text are not. The subject is one line: control characters (CR,
 *   LF, ...) become spaces.
 * - The preheader, if any, is placed hidden at the top of the HTML body, escaped.
 * - Without a text source, the text is derived from the rendered HTML (or rendered from the text variant
 *   of the few outputs it depends on, see `TextVariants`); without HTML the message is text-only
 *   (`html: null`).
 * - With `rewrite` (tracking's, see `trackingRewrite`), the HTML is rewritten after rendering: links
 *   tracked, the open pixel added.
 *
 * @throws MailroomError `RENDER_FAILED` naming the part and the cause: a missing variable under
 * `strictVariables` (`undefined variable: firstName`), a render time or memory limit exceeded, a filter
 * failing.
 */
export function renderDelivery(
  prepared: PreparedContent,
  recipient: RenderRecipient,
  rewrite?: HtmlRewrite,
): RenderedContent {
  const scope = buildScope(prepared.variables, recipient);
  const options = prepared.renderOptions;
  const { html: htmlEngine, text: textEngine } = liquidEngines;

  const subject = singleLine(renderPart(textEngine, prepared.subject, scope, options, 'subject'));
  let html = prepared.html === null ? null : renderPart(htmlEngine, prepared.html, scope, options, 'html');
  // Tracking (opens, clicks): the text part comes from the untracked HTML unless the mailing opted in.
  let textHtml: string | null | (() => string) = html;
  if (html !== null && rewrite) {
    const rewritten = rewrite.apply(html);
    html = rewritten.html;
    textHtml = rewrite.textFromRewritten ? rewritten.html : rewritten.plain;
  }
  let text: string;
  if (prepared.text !== null) text = renderPart(textEngine, prepared.text, scope, options, 'text');
  else if (textHtml !== null) text = textOfHtml(prepared, textHtml, scope);
  else text = '';
  if (html !== null && prepared.preheader !== null) {
    const preheader = singleLine(renderPart(textEngine, prepared.preheader, scope, options, 'preheader'));
    if (preheader !== '') html = insertPreheader(html, preheader);
  }
  return { subject, text, html };
}

/**
 * The text of a recipient's rendered HTML: from the text variant of its pinned values, else converted
 * (`html` is built only then, when it is a function: the untracked HTML of a tracked message).
 */
function textOfHtml(prepared: PreparedContent, html: string | (() => string), scope: object): string {
  const variants = prepared.textVariants;
  if (variants !== undefined) {
    const options = prepared.renderOptions;
    const values = variants.pins.map((pin) => renderPart(liquidEngines.html, pin, scope, options, 'html'));
    const template = variants.variant(values);
    if (template !== null) return renderPart(liquidEngines.text, template, scope, options, 'text');
  }
  return htmlToText(typeof html === 'string' ? html : html());
}

function renderPart(
  engine: Liquid,
  template: Template[],
  scope: object,
  options: PreparedRenderOptions,
  part: string,
): string {
  try {
    return String(engine.renderSync(template, scope, options));
  } catch (error) {
    throw liquidFailure('RENDER_FAILED', part, error);
  }
}
