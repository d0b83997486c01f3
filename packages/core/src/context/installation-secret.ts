import { randomBytes } from 'node:crypto';
import type { BaseContext } from './base-context.js';

/**
 * A signing key: `given` when configured, else a random one generated once and kept in the store's
 * settings under `setting` (so every process on the store signs alike, and signatures survive restarts).
 * Read once per engine; a failed read is tried again on the next call.
 */
export function installationSecret(
  ctx: BaseContext,
  setting: string,
  given: string | undefined,
): () => Promise<string> {
  let secret: Promise<string> | undefined;
  return () => {
    if (given !== undefined) return Promise.resolve(given);
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
