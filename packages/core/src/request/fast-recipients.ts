import type { Variables } from '../store/records.js';
import { checkAddress, checkMailbox, MAX_DISPLAY_NAME_LENGTH } from './address.js';
import { copyVariables } from './copy-variables.js';
import { FIELD_LIMITS, MAX_MAILBOX_LENGTH, RECIPIENT_VARIABLES_BUDGET } from './field-limits.js';
import type { NormalizedRecipient } from './request-types.js';
import { hasLineBreak, trimBlanks } from './text-checks.js';

/**
 * The recipients list checked and normalized in one pass, without zod: the hot part of accepting a
 * 250-recipient batch, where walking the list through the schemas and then normalizing it again cost
 * more than everything else the engine does for the batch.
 *
 * It accepts only what the schemas accept, and normalizes exactly as the normalize step does. Anything
 * it is not sure of (a bad entry, an unusual object, a getter that throws) makes it return `undefined`,
 * and the caller runs the schemas on the whole body instead, so that every issue is zod's own.
 *
 * @param list the `recipients` field as sent.
 * @param min the fewest entries the schema accepts.
 * @returns the normalized recipients, duplicates (by normalized address) collapsed to their first
 *   occurrence; or `undefined` when the schemas must decide.
 */
export function fastRecipients(list: unknown, min: number): NormalizedRecipient[] | undefined {
  if (!Array.isArray(list) || list.length < min) return undefined;
  try {
    const seen = new Set<string>();
    const out: NormalizedRecipient[] = [];
    for (let i = 0; i < list.length; i++) {
      const recipient = fastRecipient(list[i]);
      if (recipient === undefined) return undefined;
      if (seen.has(recipient.address)) continue;
      seen.add(recipient.address);
      out.push(recipient);
    }
    return out;
  } catch {
    return undefined;
  }
}

function fastRecipient(item: unknown): NormalizedRecipient | undefined {
  if (typeof item === 'string') {
    if (item.length > MAX_MAILBOX_LENGTH) return undefined;
    const mailbox = checkMailbox(item);
    if (!mailbox.ok) return undefined;
    return recipient(mailbox.address, mailbox.name, {});
  }
  if (!isPlainRecord(item)) return undefined;
  const { address, name, variables } = item as { address?: unknown; name?: unknown; variables?: unknown };
  if (typeof address !== 'string' || address.length > FIELD_LIMITS.address.max) return undefined;
  const checked = checkAddress(address);
  if (!checked.ok) return undefined;
  let given: string | null = null;
  if (typeof name === 'string') {
    if (name.length > MAX_DISPLAY_NAME_LENGTH || hasLineBreak(name)) return undefined;
    // As the normalize step: trimmed of spaces and tabs; a blank name counts as not given.
    const trimmed = trimBlanks(name);
    given = trimmed.length > 0 ? trimmed : null;
  } else if (name !== undefined && name !== null) {
    return undefined;
  }
  let vars: Variables = {};
  if (variables !== undefined && variables !== null) {
    // The schema's record takes plain objects with string keys only; its copy then drops nothing else.
    if (!isPlainRecord(variables) || Object.getOwnPropertySymbols(variables).length > 0) return undefined;
    const copied = copyVariables(variables as Record<string, unknown>, RECIPIENT_VARIABLES_BUDGET);
    if (!copied.ok) return undefined;
    vars = copied.value;
  }
  return recipient(checked.address, given, vars);
}

function recipient(address: string, name: string | null, variables: Variables): NormalizedRecipient {
  if (name !== null) return { address, name, nameGiven: true, variables };
  return { address, name: address.slice(0, address.lastIndexOf('@')), nameGiven: false, variables };
}

// Objects as JSON.parse makes them; anything else (class instances, arrays) goes to the schemas.
function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
