import type { Liquid, Template } from 'liquidjs';
import type { RenderedContent } from '../records.js';
import { liquidEngines } from './liquid-engine.js';
import { liquidFailure } from './liquid-error.js';
import { insertPreheader } from './preheader.js';
import type { PreparedContent, PreparedRenderOptions } from './prepare-content.js';
import { singleLine } from './single-line.js';
import { htmlToText } from './text.js';
import { buildScope, type RenderRecipient } from './variables.js';

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
 *
 * @throws MailroomError `RENDER_FAILED` naming the part and the cause: a missing variable under
 * `strictVariables` (`undefined variable: firstName`), a render time or memory limit exceeded, a filter
 * failing.
 */
export function renderDelivery(prepared: PreparedContent, recipient: RenderRecipient): RenderedContent {
  const scope = buildScope(prepared.variables, recipient);
  const options = prepared.renderOptions;
  const { html: htmlEngine, text: textEngine } = liquidEngines;

  const subject = singleLine(renderPart(textEngine, prepared.subject, scope, options, 'subject'));
  let html = prepared.html === null ? null : renderPart(htmlEngine, prepared.html, scope, options, 'html');
  let text: string;
  if (prepared.text !== null) text = renderPart(textEngine, prepared.text, scope, options, 'text');
  else if (html !== null) text = textOfHtml(prepared, html, scope);
  else text = '';
  if (html !== null && prepared.preheader !== null) {
    const preheader = singleLine(renderPart(textEngine, prepared.preheader, scope, options, 'preheader'));
    if (preheader !== '') html = insertPreheader(html, preheader);
  }
  return { subject, text, html };
}

/** The text of a recipient's rendered HTML: from the text variant of its pinned values, else converted. */
function textOfHtml(prepared: PreparedContent, html: string, scope: object): string {
  const variants = prepared.textVariants;
  if (variants !== undefined) {
    const options = prepared.renderOptions;
    const values = variants.pins.map((pin) => renderPart(liquidEngines.html, pin, scope, options, 'html'));
    const template = variants.variant(values);
    if (template !== null) return renderPart(liquidEngines.text, template, scope, options, 'text');
  }
  return htmlToText(html);
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
