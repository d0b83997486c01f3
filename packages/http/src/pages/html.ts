/**
 * HTML built by a tagged template that escapes every interpolated value unless it is already `SafeHtml`.
 * Addresses, subjects, names and SMTP replies come from whoever sends or receives mail: escaping by default
 * means a page can only forget to trust a value, never forget to escape one.
 */

/** A string of HTML that is safe to place as is (built by {@link html} or {@link raw}). */
export class SafeHtml {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

/** What a page may interpolate: text (escaped), safe HTML, lists of either, and nothing (rendered empty). */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Text as HTML: safe in element content and in quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

/** Marks a string as trusted HTML. Only for markup this package wrote itself. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/**
 * The tag: `html\`<td>${delivery.address}</td>\`` escapes the address. `false`, `null` and `undefined`
 * render nothing, so `${cond && html\`...\`}` works; arrays are joined.
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}
