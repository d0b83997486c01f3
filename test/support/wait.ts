/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** How {@link waitUntil} polls and what it says when it gives up. */
export interface WaitOptions {
  /** Milliseconds between two checks. @default 25 */
  intervalMs?: number;
  /**
   * What was awaited, in words, or a function giving more to say at the timeout (a child's stderr):
   * added to the failure message.
   */
  what?: string | (() => string);
}

/**
 * Checks `condition` every `intervalMs` until it holds; rejects once `timeoutMs` has passed without it
 * holding, naming the condition (its source, and `what`).
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  options: WaitOptions = {},
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) {
      const what = typeof options.what === 'function' ? options.what() : options.what;
      const source = condition.toString().replace(/\s+/g, ' ').slice(0, 200);
      throw new Error(`waitUntil: not met within ${timeoutMs} ms: ${source}${what ? `\n${what}` : ''}`);
    }
    await sleep(options.intervalMs ?? 25);
  }
}
