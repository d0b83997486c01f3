import type { TemplateRecord } from '../store/records.js';

/** The bodies of a mailing before rendering: Liquid sources, either of which may be absent. */
export interface ContentBodies {
  /** HTML body (Liquid), or null for text-only content. */
  html: string | null;
  /** Text body (Liquid), or null to derive it from the rendered HTML. */
  text: string | null;
}

/**
 * Something shaped like an HTML tag: `<p>`, `</div>`, `<br/>`, `<a href="...">`. The attribute part stops
 * at the next `<`, so every character is scanned by at most one attempt and the search stays linear.
 */
const HTML_TAG = /<\/?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?\/?>/;

/** True when a request's `message` reads as HTML rather than plaintext. */
export function looksLikeHtml(message: string): boolean {
  return HTML_TAG.test(message);
}

/**
 * Splits a request's `message` (plaintext or HTML, per the spec) into bodies: HTML when it contains
 * something shaped like a tag, then the text part is derived at render; plaintext otherwise (no HTML part).
 *
 * @example contentFromMessage('<p>Hi {{ recipient.firstName }}</p>') // { html: '<p>Hi ...</p>', text: null }
 */
export function contentFromMessage(message: string): ContentBodies {
  return looksLikeHtml(message) ? { html: message, text: null } : { html: null, text: message };
}

/** The bodies of a stored template: a `text` template is the text part, `html`/`mjml` the compiled HTML. */
export function contentFromTemplate(template: Pick<TemplateRecord, 'format' | 'compiled'>): ContentBodies {
  return template.format === 'text'
    ? { html: null, text: template.compiled }
    : { html: template.compiled, text: null };
}
