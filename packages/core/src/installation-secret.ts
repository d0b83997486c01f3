import { randomBytes } from 'node:crypto';
import type { EngineContext } from './engine-context.js';

/**
 * An HMAC key of the installation: `configured` when given, else 32 random bytes generated once and kept
 * in the store's settings under `setting` (`Store.ensureSetting`), so every process on the store signs
 * alike and links survive restarts. Read once per process; a failed read is tried again next time.
 */
export function installationSecret(
  ctx: EngineContext,
  setting: string,
  configured: string | undefined,
): () => Promise<string> {
  let secret: Promise<string> | undefined;
  return () => {
    if (configured !== undefined) return Promise.resolve(configured);
    secret ??= ctx
      .ready()
      .then(() => ctx.store.ensureSetting(setting, randomBytes(32).toString('base64url'), ctx.clock.now()))
      .catch((error: unknown) => {
        secret = undefined;
        throw error;
      });
    return secret;
  };
}
