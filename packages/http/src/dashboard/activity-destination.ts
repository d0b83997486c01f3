/**
 * The destination picker of the project's activity chart: a plain GET form (no script), `?destination=`
 * a group's name or a domain; empty for every destination.
 */
import { DEFAULT_DESTINATION_GROUPS } from '@mailroom/core';
import { html, type SafeHtml } from '../pages/html.js';

/** Longest destination name taken from the query (a domain's longest). */
const MAX_NAME = 253;

/** The destination asked for in `query`, trimmed and lower-cased; undefined when none. */
export function destinationParam(query: URLSearchParams): string | undefined {
  const name = (query.get('destination') ?? '').trim().toLowerCase().slice(0, MAX_NAME);
  return /^[a-z0-9][a-z0-9.*_-]*$/.test(name) ? name : undefined;
}

/**
 * The form: the groups and `domains` (recent bounces' destinations) as suggestions; `current` is shown
 * with a link back to every destination.
 */
export function destinationPicker(
  action: string,
  current: string | undefined,
  domains: readonly string[],
): SafeHtml {
  const suggestions = [...new Set([...Object.keys(DEFAULT_DESTINATION_GROUPS), ...domains])];
  return html`<form method="get" action="${action}" class="inline" data-destination-picker><label for="destination">Destination</label> <input id="destination" name="destination" list="destination-names" value="${current ?? ''}" placeholder="all, or a group or domain" maxlength="${MAX_NAME}"> <button type="submit">Show</button>${current ? html` <a href="${action}">all destinations</a>` : ''}<datalist id="destination-names">${suggestions.map((name) => html`<option value="${name}"></option>`)}</datalist></form>`;
}
