import { createHash, randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * A new unique id: `prefix_` + 9 base-36 characters of milliseconds + 16 random base-36 characters.
 * Time-ordered so that ids sort roughly by creation, which keeps B-tree inserts local.
 */
export function newId(prefix: string, now: number = Date.now()): string {
  return `${prefix}_${now.toString(36).padStart(9, '0')}${randomToken(16)}`;
}

/**
 * An id shaped as {@link newId}'s, its 16 last characters drawn from `seed` (SHA-256) instead of chance:
 * the same seed and time give the same id, so that what it names can be written once only (a unique key).
 */
export function derivedId(prefix: string, now: number, seed: string): string {
  const digest = createHash('sha256').update(seed).digest();
  let tail = '';
  for (const b of digest) {
    if (tail.length === 16) break;
    if (b < 252) tail += ALPHABET[b % 36];
  }
  return `${prefix}_${now.toString(36).padStart(9, '0')}${tail}`;
}

// Drawing random bytes from a pool: one randomFillSync per 4 KiB instead of one per id (ids are minted
// per delivery, 250 per batch, and the syscall dominated the cost).
const pool = Buffer.allocUnsafe(4096);
let poolOffset = pool.length;

function nextRandomByte(): number {
  if (poolOffset >= pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++] as number;
}

/** `length` random characters of `[0-9a-z]`. */
export function randomToken(length: number): string {
  let out = '';
  while (out.length < length) {
    const b = nextRandomByte();
    // 252 = 36 * 7: rejecting bytes above keeps the distribution uniform.
    if (b < 252) out += ALPHABET[b % 36];
  }
  return out;
}
