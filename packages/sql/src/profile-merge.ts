import type { Json, ProfileUpsert, ProfileUpsertOptions, Variables } from '@mailroom/core';

/** The fields of a stored profile that an upsert may change. */
export interface MergeableProfile {
  name: string | null;
  traits: Variables;
  labels: string[];
}

/** A merge result: the new fields, and whether any differs from the stored ones. */
export interface MergedProfile extends MergeableProfile {
  changed: boolean;
}

/**
 * Apply one {@link ProfileUpsert} to an existing profile by exactly the contract's rules (records.ts),
 * nothing more: the name is replaced when given and either `onExistingProfile` is `override` or the
 * stored name is null; traits merge key by key, the incoming value winning on a shared key only under
 * `onExistingTrait: 'override'`; labels are the union in insertion order. Status is never touched.
 */
export function mergeProfile(
  stored: MergeableProfile,
  row: ProfileUpsert,
  options: Pick<ProfileUpsertOptions, 'onExistingProfile' | 'onExistingTrait'>,
): MergedProfile {
  let changed = false;

  let name = stored.name;
  // `name: null` means "not given", as an absent name does.
  if (
    row.name !== undefined &&
    row.name !== null &&
    (options.onExistingProfile === 'override' || stored.name === null)
  ) {
    if (row.name !== stored.name) changed = true;
    name = row.name;
  }

  let traits = stored.traits;
  if (row.traits) {
    for (const [key, value] of Object.entries(row.traits)) {
      const present = Object.hasOwn(stored.traits, key);
      if (present && (options.onExistingTrait !== 'override' || jsonEqual(stored.traits[key] as Json, value)))
        continue;
      if (traits === stored.traits) traits = { ...stored.traits };
      traits[key] = value;
      changed = true;
    }
  }

  let labels = stored.labels;
  if (row.labels) {
    for (const label of row.labels) {
      if (labels.includes(label)) continue;
      if (labels === stored.labels) labels = [...stored.labels];
      labels.push(label);
      changed = true;
    }
  }

  return { name, traits, labels, changed };
}

/** Structural equality of two JSON values (object key order does not matter). */
export function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => jsonEqual(item, b[i]));
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
}
