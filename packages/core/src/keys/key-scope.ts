/**
 * What a project key may do. `full`: everything over HTTP; `sending`: only the spec's send endpoints
 * (send, broadcast and its batches); `read`: only reads (GET and HEAD of the management routes).
 * `sending` and `read` are disjoint; `full` holds both.
 */
export type KeyScope = 'full' | 'sending' | 'read';

/** Every scope, in the order the docs and the CLI list them. */
export const KEY_SCOPES: readonly KeyScope[] = ['full', 'sending', 'read'];

/** True when a key of scope `held` may call what needs `needed`. */
export function scopeAllows(held: KeyScope, needed: KeyScope): boolean {
  return held === 'full' || held === needed;
}
