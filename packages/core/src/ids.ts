import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * A new unique id: `prefix_` + 9 base-36 characters of milliseconds + 16 random base-36 characters.
 * Time-ordered so that ids sort roughly by creation, which keeps B-tree inserts local.
 */
export function newId(prefix: string, now: number = Date.now()): string {
  return `${prefix}_${now.toString(36).padStart(9, '0')}${randomToken(16)}`;
}

/** `length` random characters of `[0-9a-z]`. */
export function randomToken(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  // 252 = 36 * 7: rejecting bytes above keeps the distribution uniform.
  for (let i = 0; out.length < length; i++) {
    if (i >= bytes.length) return out + randomToken(length - out.length);
    const b = bytes[i] as number;
    if (b < 252) out += ALPHABET[b % 36];
  }
  return out;
}
