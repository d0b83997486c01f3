import { de } from './de.js';
import { en } from './en.js';
import { fr } from './fr.js';
import type { ContactPageStrings } from './strings.js';

export { type ContactPageStrings, fill } from './strings.js';

/** The languages of the contact pages, by primary language subtag. Add a file and a line to add one. */
export const CONTACT_PAGE_LANGUAGES: Readonly<Record<string, ContactPageStrings>> = { en, de, fr };

/**
 * The strings for a contact's `locale` trait (`de`, `de-AT`, `fr_CH`): its primary language when the
 * pages have it, else English.
 */
export function stringsFor(locale: string | null | undefined): ContactPageStrings {
  const primary = (locale ?? '').trim().toLowerCase().split(/[-_]/)[0] ?? '';
  return (Object.hasOwn(CONTACT_PAGE_LANGUAGES, primary) ? CONTACT_PAGE_LANGUAGES[primary] : undefined) ?? en;
}
