/**
 * The profile-merge rule: what one {@link ProfileUpsert} does to a profile, written once. Every store
 * applies it: the memory store calls it, the SQL store calls it where it merges in TypeScript and merges
 * in SQL only in statements the conformance kit checks against it (`store-suite-profile-merge.ts`).
 * For store adapters; the engine itself only builds the rows.
 */
import { PROFILE_TRAITS_BUDGET } from '../request/field-limits.js';
import type { Json, ProfileUpsert, ProfileUpsertOptions, Variables } from '../store/records.js';
import { memberSize, type TraitSize, traitsSize } from './trait-size.js';

/** The fields of a profile that an upsert may set: name, traits and labels. */
export interface ProfileFields {
  name: string | null;
  traits: Variables;
  labels: string[];
}

/** What {@link mergeProfile} returns: the fields after the upsert, and whether any of them changed. */
export interface MergedProfile extends ProfileFields {
  changed: boolean;
  /**
   * Incoming traits left out because taking them would have put the profile's traits past the cap
   * ({@link PROFILE_TRAITS_CAP}); 0 when none was.
   */
  skippedTraits: number;
}

/**
 * The cap a merge keeps a profile's traits within: `FIELD_LIMITS.profileTraits` keys (at every depth) and
 * `profileTraitBytes` bytes of JSON, the caps of one request's traits, measured as `copyVariables` does.
 */
export const PROFILE_TRAITS_CAP: Readonly<{ keys: number; bytes: number }> = {
  keys: PROFILE_TRAITS_BUDGET.maxKeys,
  bytes: PROFILE_TRAITS_BUDGET.maxBytes,
};

/** The options of an upsert that the merge reads. */
export type ProfileMergeOptions = Pick<ProfileUpsertOptions, 'onExistingProfile' | 'onExistingTrait'>;

/**
 * The fields of a profile that `row` creates (no profile had its address): `name ?? null`,
 * `traits ?? {}` and its labels without repeats, in first-occurrence order. Status `subscribed` and
 * `createdAt = updatedAt = now` are the store's to set. The result shares `row`'s objects: a store
 * that keeps them copies them.
 */
export function newProfile(row: ProfileUpsert): ProfileFields {
  return {
    name: row.name ?? null,
    traits: row.traits ?? {},
    labels: row.labels ? distinctLabels(row.labels) : [],
  };
}

/**
 * Apply one upsert row to a stored profile:
 * - name: `name: null` or absent means "not given"; a given name replaces the stored one when
 *   `onExistingProfile` is `override` or the stored name is null.
 * - traits: merged on top-level keys (a nested value is replaced whole). A key is present when the
 *   stored traits have it as an OWN key (`Object.hasOwn`: a trait named `constructor` or `toString` is
 *   a key like any other). An absent key is added; a present one takes the incoming value only under
 *   `onExistingTrait: 'override'`.
 * - traits cap: a trait is added (or replaced) only if the traits stay within {@link PROFILE_TRAITS_CAP}
 *   after it (1,000 keys counted at every depth, 64 KiB of JSON); otherwise it is skipped, counted in
 *   `skippedTraits`, and the next incoming key is tried. Stored traits are never dropped to make room, so
 *   imports that each fit cannot grow one profile past the cap together. A new profile is the row's traits
 *   as they are (`newProfile`): its caller checks a row against the cap (CSV rows, the profile API).
 * - labels: the stored labels, then each incoming label not among them yet (a label is kept once).
 * - `status` and `createdAt` are never touched.
 *
 * `changed` is true when the result differs from `stored` (a trait replaced by an equal JSON value is
 * no change). A store writes the profile, with `updatedAt = now`, only when it changed: re-importing the
 * same data writes nothing and leaves `updatedAt` at the last real change. Rows of one write for the same
 * address apply in order, each onto the result of the one before.
 *
 * Pure: `stored` is not modified; the result shares unchanged objects with `stored` and incoming
 * values with `row`.
 */
export function mergeProfile(
  stored: ProfileFields,
  row: ProfileUpsert,
  options: ProfileMergeOptions,
): MergedProfile {
  let changed = false;

  let name = stored.name;
  if (
    row.name !== undefined &&
    row.name !== null &&
    row.name !== stored.name &&
    (options.onExistingProfile === 'override' || stored.name === null)
  ) {
    name = row.name;
    changed = true;
  }

  let traits = stored.traits;
  let skippedTraits = 0;
  if (row.traits) {
    // Measured once, when a first trait is to be taken, then kept up to date trait by trait.
    let size: TraitSize | undefined;
    for (const [key, value] of Object.entries(row.traits)) {
      const present = Object.hasOwn(traits, key);
      if (present) {
        if (options.onExistingTrait !== 'override' || jsonEqual(traits[key] as Json, value)) continue;
      }
      size ??= traitsSize(traits);
      const added = memberSize(key, value);
      const removed = present ? memberSize(key, traits[key] as Json) : { keys: 0, bytes: 0 };
      const keys = size.keys + added.keys - removed.keys;
      const bytes = size.bytes + added.bytes - removed.bytes;
      if (keys > PROFILE_TRAITS_CAP.keys || bytes > PROFILE_TRAITS_CAP.bytes) {
        skippedTraits += 1;
        continue;
      }
      size = { keys, bytes };
      if (traits === stored.traits) traits = { ...stored.traits };
      setOwn(traits, key, value);
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

  return { name, traits, labels, changed, skippedTraits };
}

/**
 * `labels` without repeats, in first-occurrence order: `labels` itself when it has none (the usual
 * case, so callers that cache JSON by object identity keep their hit), else a new array.
 */
export function distinctLabels(labels: string[]): string[] {
  for (let i = 1; i < labels.length; i++) {
    if (labels.lastIndexOf(labels[i] as string, i - 1) >= 0) return [...new Set(labels)];
  }
  return labels;
}

/** Structural equality of two JSON values (object key order does not matter). */
function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
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

/** Sets an own property, `__proto__` included (an assignment would set the prototype instead). */
function setOwn(target: Variables, key: string, value: Json): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}
