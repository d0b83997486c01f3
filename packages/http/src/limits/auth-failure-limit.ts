import { MailroomError } from '@mailroom/core';

/** How many wrong keys a client address may present before it is refused for a while. */
export interface AuthFailureLimitOptions {
  /**
   * Wrong keys (unknown, malformed, revoked or expired) one client address may present per window; the
   * next attempts from that address, right or wrong, get 429 with `Retry-After` until the window ends.
   * @default 10
   */
  failures?: number;
  /**
   * The window's length in seconds, counted from the address's first failure.
   * @default 60
   */
  windowSeconds?: number;
  /**
   * Client addresses remembered at once; past it the oldest entries are dropped, so memory stays bounded
   * whatever the number of addresses (an attacker rotating addresses loses their own counts first).
   * @default 10_000
   */
  maxAddresses?: number;
}

/** Counts wrong keys per client address: see {@link createAuthFailureLimit}. */
export interface AuthFailureLimit {
  /** Throws `RATE_LIMITED` with `retryAfter` (seconds) when `address` is over its failures. */
  check(address: string): void;
  /** Counts one wrong key from `address`. */
  fail(address: string): void;
  /** Addresses remembered now (for tests of the bound). */
  readonly size: number;
}

interface Window {
  failures: number;
  /** Milliseconds (monotonic) when the window ends. */
  endsAt: number;
}

/**
 * A fixed window per client address, in this process's memory: a correct key is never slowed (the check is
 * a map lookup), and an address is refused only after its own failures. Several nodes each count their own.
 */
export function createAuthFailureLimit(
  options: AuthFailureLimitOptions = {},
  now: () => number = () => performance.now(),
): AuthFailureLimit {
  const limit = options.failures ?? 10;
  const windowMs = (options.windowSeconds ?? 60) * 1000;
  const maxAddresses = options.maxAddresses ?? 10_000;
  if (!(Number.isSafeInteger(limit) && limit >= 1) || !(windowMs > 0) || !(maxAddresses >= 1)) {
    throw new MailroomError(
      'VALIDATION_FAILED',
      'authFailureLimit: failures and maxAddresses must be at least 1, windowSeconds positive',
      { source: '@mailroom/http' },
    );
  }
  const windows = new Map<string, Window>();

  const current = (address: string, t: number): Window | undefined => {
    const window = windows.get(address);
    if (window && window.endsAt <= t) {
      windows.delete(address);
      return undefined;
    }
    return window;
  };

  /** Drops ended windows, then the oldest ones (a Map iterates in insertion order) while over the bound. */
  const makeRoom = (t: number): void => {
    for (const [address, window] of windows) if (window.endsAt <= t) windows.delete(address);
    for (const address of windows.keys()) {
      if (windows.size < maxAddresses) break;
      windows.delete(address);
    }
  };

  return {
    check(address) {
      const t = now();
      const window = current(address, t);
      if (!window || window.failures < limit) return;
      throw new MailroomError('RATE_LIMITED', 'Too many invalid keys from this address; retry later', {
        retryAfter: Math.max(1, Math.ceil((window.endsAt - t) / 1000)),
      });
    },
    fail(address) {
      const t = now();
      const window = current(address, t);
      if (window) {
        window.failures += 1;
        return;
      }
      if (windows.size >= maxAddresses) makeRoom(t);
      windows.set(address, { failures: 1, endsAt: t + windowMs });
    },
    get size() {
      return windows.size;
    },
  };
}
