/**
 * Capped, jittered exponential backoff ("full jitter" on the upper half): attempt 1 waits about
 * `baseMs`, each further attempt doubles, never beyond `maxMs`. Jitter spreads retries of a
 * broadcast so a relay that said 421 is not hit by all of them at once.
 */
export function retryDelay(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp / 2 + random() * (exp / 2));
}
