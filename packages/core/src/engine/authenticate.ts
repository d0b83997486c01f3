import { MailroomError } from '../base/errors.js';
import { hashSecret, isWellFormedSecret } from '../base/secrets.js';
import type { AccountStore } from '../store/account-store.js';
import type { AuthContext } from './auth-context.js';

/**
 * The project of `secret`, found through `store` (the engine's, or one bound to the app's transaction);
 * `UNAUTHORIZED` otherwise, with one message for missing, malformed and unknown secrets.
 */
export async function authenticateSecret(
  store: Pick<AccountStore, 'findSecret'>,
  secret: string | null | undefined,
): Promise<AuthContext> {
  // One answer for every failure: nothing to learn from the difference.
  const unauthorized = () => new MailroomError('UNAUTHORIZED', 'Missing or invalid project secret');
  if (!secret || !isWellFormedSecret(secret)) throw unauthorized();
  const found = await store.findSecret(hashSecret(secret));
  if (!found) throw unauthorized();
  return { project: found.project, mode: found.secret.mode };
}

/** True for a real `AuthContext`; anything else (a string, null, undefined) goes through the secret check. */
export function isAuthContext(auth: unknown): auth is AuthContext {
  return typeof auth === 'object' && auth !== null && 'project' in auth;
}
