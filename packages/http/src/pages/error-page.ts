import { bareLayout, layout, type PageContext } from '../dashboard/layout.js';
import { html, type SafeHtml } from './html.js';

/** What a refusal or fault says, by status: nothing from the request is echoed back. */
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

/** An error page, inside the dashboard frame when someone is signed in. */
export function errorPage(
  nonce: string,
  status: number,
  requestId: string,
  ctx: PageContext | undefined,
  detail?: string,
): SafeHtml {
  const { title, text } = TEXTS[status] ?? {
    title: 'Something went wrong',
    text: 'The dashboard could not show this page.',
  };
  const content = html`<div class="card"><h1>${title}</h1><p>${detail ?? text}</p><p class="muted">Status ${status} · request <code>${requestId}</code></p>${
    ctx && html`<p><a href="${ctx.root}/broadcasts">Back to the broadcasts</a></p>`
  }</div>`;
  return ctx ? layout(ctx, title, null, content) : bareLayout(nonce, title, content);
}
