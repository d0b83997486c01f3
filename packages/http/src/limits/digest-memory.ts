/** Key digests seen recently (valid ones, or wrong ones), each for a while, bounded in number. */
export interface DigestMemory {
  has(digest: string): boolean;
  add(digest: string): void;
  delete(digest: string): void;
}

/**
 * At most `max` digests, each remembered `ttlMs` from its last `add`; past the bound the oldest one goes
 * (a Map iterates in insertion order, and `add` moves a digest to the end).
 */
export function createDigestMemory(max: number, ttlMs: number, now: () => number): DigestMemory {
  const until = new Map<string, number>();
  return {
    has(digest) {
      const end = until.get(digest);
      if (end === undefined) return false;
      if (end > now()) return true;
      until.delete(digest);
      return false;
    },
    add(digest) {
      until.delete(digest);
      if (until.size >= max) {
        const oldest = until.keys().next();
        if (!oldest.done) until.delete(oldest.value);
      }
      until.set(digest, now() + ttlMs);
    },
    delete(digest) {
      until.delete(digest);
    },
  };
}
