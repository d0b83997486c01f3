/**
 * Private keys at rest: AES-256-GCM under a key derived by HKDF-SHA256 from the installation secret.
 *
 * The engine's other installation secrets are HMAC keys (VERP, unsubscribe and tracking tokens); nothing
 * else is encrypted, so this is the one sealing scheme. A fresh salt per sealed key gives every key its own
 * AES key; the label (domain and selector) is authenticated data, so a sealed key copied onto another
 * domain's row does not open.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { MailroomError } from '../base/errors.js';

/** The installation setting that holds the generated sealing secret when none is configured. */
export const DKIM_SEALING_SECRET_SETTING = 'dkim-sealing-secret';

/** Secrets shorter than this are refused (as for the other installation secrets). */
const MIN_SECRET_LENGTH = 16;
/** Format tag: a later scheme gets another, and both can be opened during a migration. */
const VERSION = 'mrk1';
/** HKDF `info`: binds derived keys to this one use of the secret. */
const INFO = Buffer.from('mailroom dkim private key v1', 'utf8');

/**
 * Seals `plaintext` (a private key's PEM) with `secret` for `label`:
 * `mrk1.<salt>.<iv>.<tag>.<ciphertext>`, each part base64url.
 * @throws MailroomError `VALIDATION_FAILED` when the secret is shorter than 16 characters.
 */
export function sealKey(plaintext: string, secret: string, label: string): string {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', derive(secret, salt), iv);
  cipher.setAAD(Buffer.from(label, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [VERSION, salt, iv, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
}

/**
 * The plaintext of a key sealed by {@link sealKey} with the same secret and label.
 * @throws MailroomError `INTERNAL` when it does not open: another secret (the installation secret was
 * changed or lost), another label, or altered bytes. The message never carries key material.
 */
export function openKey(sealed: string, secret: string, label: string): string {
  const parts = sealed.split('.');
  if (parts.length !== 5 || parts[0] !== VERSION)
    throw unopenable(label, 'is not a sealed key of this version');
  const [salt, iv, tag, ciphertext] = parts.slice(1).map((part) => Buffer.from(part, 'base64url')) as [
    Buffer,
    Buffer,
    Buffer,
    Buffer,
  ];
  const key = derive(secret, salt);
  try {
    // A fixed tag length: GCM would otherwise accept a tag cut short, which is easier to forge.
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
    decipher.setAAD(Buffer.from(label, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch (cause) {
    throw unopenable(
      label,
      'does not open with the installation secret (was it changed?) or was altered',
      cause,
    );
  }
}

function derive(secret: string, salt: Buffer): Buffer {
  if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH) {
    const message = `The key sealing secret needs at least ${MIN_SECRET_LENGTH} characters`;
    throw new MailroomError('VALIDATION_FAILED', message, {
      issues: [{ code: 'custom', path: ['domains', 'secret'], message }],
    });
  }
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), salt, INFO, 32));
}

function unopenable(label: string, problem: string, cause?: unknown): MailroomError {
  return new MailroomError('INTERNAL', `The sealed DKIM key of ${label} ${problem}`, {
    cause,
    source: 'domains',
  });
}
