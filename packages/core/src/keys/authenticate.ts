import { MailroomError } from '../base/errors.js';
import { hashSecret, isWellFormedSecret } from '../base/secrets.js';
import type { AuthContext } from '../context/auth-context.js';
import type { AccountStore } from '../store/account-store.js';
import type { ApiKeyRecord } from '../store/records.js';
import { keyState } from './key-view.js';

/**
 * The project of `secret`, found through `store` (the engine's, or one bound to the app's transaction),
 * with the key's scope and domains; `UNAUTHORIZED` otherwise, with one message for missing, malformed,
 * unknown, revoked and expired (rotated, past its grace) keys. `onKey` is told of the key that authenticated
 * (the engine notes its last use).
 */
export async function authenticateSecret(
  store: Pick<AccountStore, 'findSecret'>,
  secret: string | null | undefined,
  now: Date,
  onKey?: (key: ApiKeyRecord) => void,
): Promise<AuthContext> {
  // One answer for every failure: nothing to learn from the difference.
  const unauthorized = () => new MailroomError('UNAUTHORIZED', 'Missing or invalid project secret');
  if (!secret || !isWellFormedSecret(secret)) throw unauthorized();
  const found = await store.findSecret(hashSecret(secret));
  if (!found) throw unauthorized();
  const { secret: key, project } = found;
  const state = keyState(key, now);
  if (state === 'revoked' || state === 'expired') throw unauthorized();
  onKey?.(key);
  return { project, mode: key.mode, key: { id: key.id, scope: key.scope, domains: key.domains } };
}

/** True for a real `AuthContext`; anything else (a string, null, undefined) goes through the secret check. */
export function isAuthContext(auth: unknown): auth is AuthContext {
  return typeof auth === 'object' && auth !== null && 'project' in auth;
}
