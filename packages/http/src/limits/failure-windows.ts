/** Fixed windows of failures per subject (a client address, a key prefix), bounded in number. */
export interface FailureWindows {
  /** Milliseconds until `subject`'s window ends when it is over its failures; 0 when it is not. */
  blockedFor(subject: string): number;
  /** Counts one failure of `subject`. */
  fail(subject: string): void;
  /** Subjects remembered now. */
  readonly size: number;
}

interface Window {
  failures: number;
  /** Milliseconds (monotonic) when the window ends. */
  endsAt: number;
}

/**
 * `limit` failures per window of `windowMs` from a subject's first failure; at most `maxSubjects` subjects,
 * past which ended windows and then the oldest ones (a Map iterates in insertion order) are dropped.
 */
export function createFailureWindows(
  limit: number,
  windowMs: number,
  maxSubjects: number,
  now: () => number,
): FailureWindows {
  const windows = new Map<string, Window>();

  const current = (subject: string, t: number): Window | undefined => {
    const window = windows.get(subject);
    if (window && window.endsAt <= t) {
      windows.delete(subject);
      return undefined;
    }
    return window;
  };

  const makeRoom = (t: number): void => {
    for (const [subject, window] of windows) if (window.endsAt <= t) windows.delete(subject);
    for (const subject of windows.keys()) {
      if (windows.size < maxSubjects) break;
      windows.delete(subject);
    }
  };

  return {
    blockedFor(subject) {
      const t = now();
      const window = current(subject, t);
      return window && window.failures >= limit ? window.endsAt - t : 0;
    },
    fail(subject) {
      const t = now();
      const window = current(subject, t);
      if (window) {
        window.failures += 1;
        return;
      }
      if (windows.size >= maxSubjects) makeRoom(t);
      windows.set(subject, { failures: 1, endsAt: t + windowMs });
    },
    get size() {
      return windows.size;
    },
  };
}
