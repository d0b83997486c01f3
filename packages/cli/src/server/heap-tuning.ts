import { setFlagsFromString } from 'node:v8';

/**
 * The V8 settings of the `mailroom` process (see docs/design-notes.md, "The heap of the mailroom
 * process"). Measured on the largest corpus template, they lower both the peak RSS and the CPU per message
 * (figures: BENCHMARKS.md, "Peak RSS at 100,000 recipients").
 *
 * - `--no-allocation-site-pretenuring`: V8 otherwise starts allocating a hot object literal straight in
 *   the old generation once most of its objects outlive a scavenge (a claimed delivery, a message in
 *   flight). Every young string such an object points to (a recipient's rendered page) is then promoted
 *   at the next scavenge, although it dies a few milliseconds later: the old generation filled with dead
 *   pages several times faster than without pretenuring.
 * - `--heap-growing-percent=100`: after a full collection the old generation may grow to twice what
 *   survived, not the up to four times V8 allows on a machine with a large heap limit. What survives in
 *   serve is small (modules, caches), but four times it was what took the process over its memory budget.
 */
export const HEAP_FLAGS: readonly string[] = [
  '--no-allocation-site-pretenuring',
  '--heap-growing-percent=100',
];

/**
 * Applies {@link HEAP_FLAGS} to this process, early (before the engine starts), and returns the flags it
 * set. A flag the process was started with (`node --heap-growing-percent=50 .../mailroom serve`) is left
 * as given. V8 reads both at every collection, so setting them at run time takes effect from the next.
 */
export function tuneHeap(
  execArgv: readonly string[] = process.execArgv,
  set: (flag: string) => void = setFlagsFromString,
): string[] {
  const given = new Set(execArgv.map(flagName));
  const applied = HEAP_FLAGS.filter((flag) => !given.has(flagName(flag)));
  for (const flag of applied) set(flag);
  return applied;
}

/** `--no-foo_bar=1` → `foo-bar`: V8 takes `_` and `-` alike, and `--no-` negates a flag. */
function flagName(arg: string): string {
  return arg
    .replace(/^--(no-)?/, '')
    .replace(/=.*$/, '')
    .replaceAll('_', '-');
}
