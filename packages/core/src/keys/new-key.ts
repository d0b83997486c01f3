import { newId } from '../base/ids.js';
import { generateSecret, hashSecret } from '../base/secrets.js';
import type { ApiKeyRecord, SecretMode } from '../store/records.js';
import type { KeyScope } from './key-scope.js';

/** Random characters of the secret shown in its prefix: enough to tell keys apart, far from enough to guess. */
const PREFIX_RANDOM_CHARS = 4;

/** A new key of `projectId` and its secret (to show once; only the digest is stored). */
export function newKey(
  projectId: string,
  fields: {
    scope: KeyScope;
    domains: readonly string[];
    mode: SecretMode;
    name?: string | null | undefined;
  },
  now: Date,
): { key: ApiKeyRecord; secret: string } {
  const secret = generateSecret(fields.mode);
  const key: ApiKeyRecord = {
    hash: hashSecret(secret),
    id: newId('key', now.getTime()),
    projectId,
    mode: fields.mode,
    scope: fields.scope,
    domains: [...fields.domains],
    prefix: secret.slice(0, `sk_${fields.mode}_`.length + PREFIX_RANDOM_CHARS),
    name: fields.name ?? null,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
    expiresAt: null,
    replacedBy: null,
  };
  return { key, secret };
}
