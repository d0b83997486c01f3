import type { KeyScope } from '../store/records.js';

export type { KeyScope } from '../store/records.js';

/** Every scope, in the order the docs and the CLI list them. */
export const KEY_SCOPES: readonly KeyScope[] = ['full', 'sending', 'read'];

/** True when a key of scope `held` may call what needs `needed`. */
export function scopeAllows(held: KeyScope, needed: KeyScope): boolean {
  return held === 'full' || held === needed;
}
