import type { ApiKeyRecord } from '../store/records.js';
import type { KeyView } from './key-types.js';

/** The view of a key at `now`: never its secret nor its digest. */
export function keyView(key: ApiKeyRecord, now: Date): KeyView {
  return {
    id: key.id,
    prefix: key.prefix,
    name: key.name ?? null,
    mode: key.mode,
    scope: key.scope,
    domains: [...key.domains],
    state: keyState(key, now),
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt,
    revokedAt: key.revokedAt,
    expiresAt: key.expiresAt,
    replacedBy: key.replacedBy,
  };
}

/** Whether `key` authenticates at `now`, and if not why. */
export function keyState(key: ApiKeyRecord, now: Date): KeyView['state'] {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt) return key.expiresAt.getTime() <= now.getTime() ? 'expired' : 'expiring';
  return 'active';
}
