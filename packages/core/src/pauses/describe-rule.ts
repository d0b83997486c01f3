import type { PauseRule } from '../store/pause-store.js';

/** A guard rule's figures in words: a pause's `reason`. */
export function describeRule(rule: PauseRule): string {
  const pct = (n: number) => `${(n * 100).toFixed(2)} %`;
  return `${rule.name}: ${rule.count} ${rule.signal} of ${rule.attempts} attempts (${pct(rule.rate)}) passed ${pct(rule.threshold)}`;
}
