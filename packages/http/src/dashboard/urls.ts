import type { MailingKind } from '@mailroom/core';

/** The dashboard's URLs, in one place so that pages and the router agree. Every dynamic part is encoded. */

/** The path segment of a kind of mailing. */
export function sectionOf(kind: MailingKind): 'broadcasts' | 'messages' {
  return kind === 'broadcast' ? 'broadcasts' : 'messages';
}

/** A query string from defined, non-empty values (with its `?`), or `''`. */
export function query(params: Record<string, string | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value) search.set(key, value);
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** A mailing's page. */
export function mailingUrl(root: string, kind: MailingKind, ref: string): string {
  return `${root}/${sectionOf(kind)}/${encodeURIComponent(ref)}`;
}

/** A mailing's live progress (JSON). */
export function progressUrl(root: string, kind: MailingKind, ref: string): string {
  return `${mailingUrl(root, kind, ref)}/progress.json`;
}

/** One delivery's page. */
export function deliveryUrl(root: string, kind: MailingKind, ref: string, address: string): string {
  return `${mailingUrl(root, kind, ref)}/delivery${query({ address })}`;
}

/** One delivery's kept content, as a sandboxed document for the preview frame. */
export function deliveryPreviewUrl(root: string, kind: MailingKind, ref: string, address: string): string {
  return `${mailingUrl(root, kind, ref)}/preview${query({ address })}`;
}

/** A template's page. */
export function templateUrl(root: string, ref: string): string {
  return `${root}/templates/${encodeURIComponent(ref)}`;
}
