import { html, type SafeHtml } from './html.js';

/**
 * Draws a whole page around its content: the dashboard's layout (dashboard/layout.ts, `frameOf`) or the
 * unsubscribe link's own shell (unsubscribe-page.ts).
 */
export type PageFrame = (title: string, content: SafeHtml) => SafeHtml;

/** What an error page says, by status: nothing from the request is echoed back. */
const TEXTS: Record<number, { title: string; text: string }> = {
  400: { title: 'Bad request', text: 'The request could not be understood.' },
  403: {
    title: 'Refused',
    text: 'This form was not sent from a page of this dashboard. Reload the page and try again.',
  },
  404: { title: 'Not found', text: 'There is nothing here in this project.' },
  405: { title: 'Not allowed', text: 'This page does not take that method.' },
  409: { title: 'Not possible', text: 'That cannot be done in the current state.' },
  413: { title: 'Too large', text: 'The form is too large.' },
  415: { title: 'Unsupported form', text: 'The form was not sent as a form.' },
};

/** What an error page shows besides its status and request id; each part has a default by status. */
export interface ErrorPageWords {
  /** The heading. @default the status's title ("Not found", ...) */
  title?: string | undefined;
  /** The sentence under it; escaped. @default the status's sentence */
  text?: string | undefined;
  /** Markup after the status line (a link back), or nothing. */
  after?: SafeHtml | false | undefined;
}

/**
 * The one HTML error page of the package (the dashboard's and the unsubscribe link's): a title, a sentence,
 * and the status and request id a user can quote to whoever runs the server, inside `frame`.
 */
export function errorPage(
  frame: PageFrame,
  status: number,
  requestId: string,
  words: ErrorPageWords = {},
): SafeHtml {
  const byStatus = TEXTS[status] ?? {
    title: 'Something went wrong',
    text: 'The dashboard could not show this page.',
  };
  const title = words.title ?? byStatus.title;
  const content = html`<div class="card"><h1>${title}</h1><p>${words.text ?? byStatus.text}</p><p class="muted">Status ${status} · request <code>${requestId}</code></p>${words.after}</div>`;
  return frame(title, content);
}
