/**
 * The words of the pages a project's contacts see (the preference centre, the signup and confirmation
 * pages), one file per language next to this one. Plain text only: the pages escape every
 * string, so no markup goes here. `{project}` and `{address}` are filled in by the page (`fill`).
 */
export interface ContactPageStrings {
  /** The BCP 47 tag of the page (`<html lang>`). */
  lang: string;
  preferencesTitle: string;
  /** Under the title: `{project}`, `{address}` (masked). */
  preferencesIntro: string;
  topicsLegend: string;
  noTopics: string;
  save: string;
  saved: string;
  nothingChanged: string;
  unsubscribeAllLegend: string;
  /** `{project}`. */
  unsubscribeAllHint: string;
  unsubscribeAll: string;
  /** `{project}`. */
  unsubscribedAll: string;
  resubscribe: string;
  resubscribed: string;
  /** The form's CSRF token was missing, of another page, or too old. */
  formExpired: string;
  invalidLinkTitle: string;
  invalidLink: string;
  erasedTitle: string;
  erased: string;
  /** The status line of an error page: `{status}`, `{request}`. */
  errorStatus: string;
  // Signup forms and their confirmation links (`signup-pages.ts`).
  /** After a plain HTML form post: the same words for every address. */
  thanksTitle: string;
  thanksText: string;
  confirmTitle: string;
  /** `{address}` (masked), `{what}` (the topic's or group's name), `{project}`: each shown in bold. */
  confirmText: string;
  confirmButton: string;
  confirmedTitle: string;
  /** `{address}`, `{what}`, `{project}`. */
  confirmedText: string;
  expiredTitle: string;
  expiredText: string;
  /** The button of an expired link's page. */
  resendButton: string;
  resentTitle: string;
  /** `{address}` (masked). */
  resentText: string;
  /** A confirmation link that is not valid (forged, altered, foreign). */
  confirmInvalidTitle: string;
  confirmInvalidText: string;
  /** `{what}` when the form names neither a topic nor a group. */
  theirMail: string;
}

/** `{name}` in `text` replaced by `values.name` (unknown names stay as they are). */
export function fill(text: string, values: Record<string, string>): string {
  return text.replace(/\{(\w+)\}/g, (m, name: string) => values[name] ?? m);
}
