/**
 * The size of a profile's traits as the traits cap counts it (`FIELD_LIMITS.profileTraits` and
 * `profileTraitBytes`, the measure of `copyVariables`): object keys at every depth, and bytes of the JSON
 * text (UTF-8 strings with their quotes, a key's colon and comma, brackets and a comma per array item, 5
 * for a boolean). The profile merge reads it to keep a profile within the cap across imports.
 */
import type { Json, Variables } from '../store/records.js';

/** Keys at every depth and bytes, as the traits cap counts them. */
export interface TraitSize {
  keys: number;
  bytes: number;
}

/** The size of a whole traits object. */
export function traitsSize(traits: Variables): TraitSize {
  const size = { keys: 0, bytes: 0 };
  add(size, traits);
  return size;
}

/** The size one member `key: value` adds to a traits object (its key, colon, comma and value). */
export function memberSize(key: string, value: Json): TraitSize {
  const size = { keys: 1, bytes: Buffer.byteLength(key, 'utf8') + 4 };
  add(size, value);
  return size;
}

function add(size: TraitSize, value: Json | undefined): void {
  switch (typeof value) {
    case 'string':
      size.bytes += Buffer.byteLength(value, 'utf8') + 2;
      return;
    case 'number':
      size.bytes += String(value).length;
      return;
    case 'boolean':
      size.bytes += 5;
      return;
    case 'undefined':
      return;
    default:
      break;
  }
  if (value === null) {
    size.bytes += 4;
  } else if (Array.isArray(value)) {
    size.bytes += 2 + value.length;
    for (const item of value) add(size, item);
  } else {
    size.bytes += 2;
    for (const key of Object.keys(value)) {
      size.keys += 1;
      size.bytes += Buffer.byteLength(key, 'utf8') + 4;
      add(size, value[key]);
    }
  }
}
