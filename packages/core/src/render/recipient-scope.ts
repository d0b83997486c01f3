import type { Json, Variables } from '../store/records.js';

/** One recipient as the renderer sees it. */
export interface RenderRecipient {
  /** Normalized address. */
  address: string;
  /** Display name; when the request gave none, the local part of the address (`jane.doe`). */
  name: string;
  /** The recipient's own variables: override the mailing's global ones. */
  variables: Variables;
  /** Profile traits (CSV columns, stored profile): exposed under `recipient.*` and `profile.*`. */
  traits: Variables;
}

/** The `recipient` / `profile` object of the Liquid scope. */
export type RecipientTraits = { [key: string]: Json } & {
  address: string;
  name: string;
  firstName: string;
  lastName: string;
};

/**
 * Splits a display name at its first run of whitespace: `Jane Mary Doe` gives `Jane` and `Mary Doe`.
 * A name without whitespace is all first name, so a name defaulted from an address (`jane.doe`) gives
 * `firstName: 'jane.doe'` and an empty `lastName`: guessing at dots would mangle real local parts.
 */
export function splitName(name: string): { firstName: string; lastName: string } {
  const trimmed = name.trim();
  const gap = trimmed.search(/\s/);
  if (gap < 0) return { firstName: trimmed, lastName: '' };
  return { firstName: trimmed.slice(0, gap), lastName: trimmed.slice(gap).trim() };
}

/**
 * The object behind `{{ recipient.* }}` and `{{ profile.* }}`: the traits, plus the address, the name and
 * the derived first and last names. A trait may replace `firstName`/`lastName` (a CSV column mapped to
 * `firstName` knows better than a split), never `address` or `name`.
 */
export function recipientTraits(recipient: RenderRecipient): RecipientTraits {
  return {
    ...splitName(recipient.name),
    ...recipient.traits,
    address: recipient.address,
    name: recipient.name,
  };
}

/**
 * Builds the Liquid scope of one recipient: global variables, overridden by the recipient's own, then
 * `recipient` and `profile` (the same object; the two names come from the two client references). The
 * built-in names are set last, so a variable called `recipient` cannot impersonate the real one. Object
 * spread (not `Object.assign`) keeps a `__proto__` key a plain own key.
 */
export function buildScope(globals: Variables, recipient: RenderRecipient): Record<string, Json> {
  const traits = recipientTraits(recipient);
  return { ...globals, ...recipient.variables, recipient: traits, profile: traits };
}
