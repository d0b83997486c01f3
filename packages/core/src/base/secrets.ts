import { createHash, randomBytes } from 'node:crypto';

/** `live` secrets deliver; `sandbox` secrets are accepted and recorded but never delivered. */
export type SecretMode = 'live' | 'sandbox';

const SECRET_PATTERN = /^sk_(live|sandbox)_[A-Za-z0-9_-]{16,200}$/;

/** A new project secret: `sk_live_` or `sk_sandbox_` followed by 32 random bytes in base64url. */
export function generateSecret(mode: SecretMode): string {
  return `sk_${mode}_${randomBytes(32).toString('base64url')}`;
}

/** SHA-256 hex digest of a secret: the only form in which secrets are stored and compared. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Whether a string has the shape of a Mailroom secret (checked before any store lookup). */
export function isWellFormedSecret(secret: string): boolean {
  return SECRET_PATTERN.test(secret);
}

/** The mode a secret's prefix announces. */
export function secretMode(secret: string): SecretMode {
  return secret.startsWith('sk_sandbox_') ? 'sandbox' : 'live';
}
