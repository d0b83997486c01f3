const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&#34;',
  "'": '&#39;',
};

/** Escapes text for HTML content or a quoted attribute value. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

/**
 * Invisible characters after the preview text: inbox previews show text up to a length, and without the
 * padding they would fill up with the first words of the body.
 */
const PADDING = '&#847;&zwnj;&nbsp;'.repeat(60);

const OPEN =
  '<div style="display:none;font-size:1px;line-height:1px;max-height:0px;max-width:0px;opacity:0;overflow:hidden;mso-hide:all">';

/** Finds an opening `<body>` or `<body ...>` tag; a fixed pattern, so the search stays linear. */
const BODY_START = /<body[\s>]/i;

/**
 * Places preview text, hidden, at the very top of the HTML body: right after the opening `<body>` tag, or
 * at the start when the HTML has none.
 *
 * @param html The rendered HTML.
 * @param preheader The preview text as plain text; it is HTML-escaped here.
 */
export function insertPreheader(html: string, preheader: string): string {
  const block = `${OPEN}${escapeHtml(preheader)}${PADDING}</div>`;
  const match = BODY_START.exec(html);
  if (match === null) return block + html;
  const end = html.indexOf('>', match.index);
  if (end < 0) return block + html;
  return html.slice(0, end + 1) + block + html.slice(end + 1);
}
