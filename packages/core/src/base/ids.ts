import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * A new unique id: `prefix_` + 9 base-36 characters of milliseconds + 16 random base-36 characters.
 * Time-ordered so that ids sort roughly by creation, which keeps B-tree inserts local.
 */
export function newId(prefix: string, now: number = Date.now()): string {
  return `${prefix}_${now.toString(36).padStart(9, '0')}${randomToken(16)}`;
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
