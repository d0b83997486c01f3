import { hashSecret, isMailroomError, MailroomError } from '@mailroom/core';
import { createDigestMemory } from './digest-memory.js';
import { createFailureWindows } from './failure-windows.js';

/** How many wrong keys a client address (or a key prefix) may present before its failing attempts get 429. */
export interface AuthFailureLimitOptions {
  /**
   * Wrong keys (unknown, malformed, revoked or expired) one client address, or one key prefix
   * (`sk_live_AbCd`), may present per window; past it, that address's or prefix's failing attempts get 429
   * with `Retry-After` until the window ends. A valid key is still served, whoever presents it.
   * @default 10
   */
  failures?: number;
  /**
   * The window's length in seconds, counted from the first failure.
   * @default 60
   */
  windowSeconds?: number;
  /**
   * Client addresses (and as many key prefixes) remembered at once; past it the oldest entries are dropped,
   * so memory stays bounded whatever the number of addresses (an attacker rotating addresses loses their
   * own counts first). The digests of recently valid and recently wrong keys are bounded by it too.
   * @default 10_000
   */
  maxAddresses?: number;
  /**
   * Key checks (one hash and one store lookup) run at once for a limited caller whose key is neither
   * known valid nor known wrong; past it such attempts get 429 without a lookup, so guessing from a
   * limited address cannot load the store.
   * @default 4
   */
  maxConcurrentChecks?: number;
}

/** Counts wrong keys per client address and per key prefix: see {@link createAuthFailureLimit}. */
export interface AuthFailureLimit {
  /**
   * Runs `verify` (the engine's check of `secret`) for a caller at `address`, counting its `UNAUTHORIZED`
   * as a failure of the address and of the secret's prefix. While either is over its failures a valid key
   * is still served, and a wrong one is refused with `RATE_LIMITED` (429, `retryAfter` in seconds), at
   * the cost of a map lookup when the key is known wrong, and never with more than `maxConcurrentChecks`
   * lookups at once otherwise. `secret` is `null` for an Authorization header that is not a bearer token.
   */
  guard<T>(address: string, secret: string | null, verify: () => Promise<T>): Promise<T>;
  /** Addresses and prefixes counted now (for tests of the bound). */
  readonly size: number;
}

/** Random characters of a secret that name its prefix (as `KeyView.prefix` shows it). */
const PREFIX_RANDOM_CHARS = 4;
const SECRET_HEAD = /^sk_(live|sandbox)_/;

/**
 * A fixed window of failures per client address and per key prefix, in this process's memory (several nodes
 * each count their own). The wrong-key guesser is slowed, never the rightful client: a request whose key is
 * valid is answered even from an address over the limit. What a limited attempt may cost is bounded: the
 * digest (SHA-256) of a key seen wrong recently is refused without a lookup, one seen valid recently is
 * looked up (its revocation counts at once), and any other takes one of `maxConcurrentChecks` slots or is
 * refused.
 */
export function createAuthFailureLimit(
  options: AuthFailureLimitOptions = {},
  now: () => number = () => performance.now(),
): AuthFailureLimit {
  const limit = options.failures ?? 10;
  const windowMs = (options.windowSeconds ?? 60) * 1000;
  const maxEntries = options.maxAddresses ?? 10_000;
  const maxChecks = options.maxConcurrentChecks ?? 4;
  if (
    !(Number.isSafeInteger(limit) && limit >= 1) ||
    !(windowMs > 0) ||
    !(Number.isSafeInteger(maxEntries) && maxEntries >= 1) ||
    !(Number.isSafeInteger(maxChecks) && maxChecks >= 1)
  ) {
    throw new MailroomError(
      'VALIDATION_FAILED',
      'authFailureLimit: failures, maxAddresses and maxConcurrentChecks must be whole numbers of at least 1, windowSeconds positive',
      { source: '@mailroom/http' },
    );
  }
  // Addresses and prefixes share one bound: twice the addresses, so prefixes cannot push addresses out.
  const windows = createFailureWindows(limit, windowMs, maxEntries * 2, now);
  const valid = createDigestMemory(maxEntries, windowMs, now);
  const wrong = createDigestMemory(maxEntries, windowMs, now);
  let checking = 0;

  const refusal = (retryAfterMs: number) =>
    new MailroomError('RATE_LIMITED', 'Too many invalid keys from this client; retry later', {
      retryAfter: Math.max(1, Math.ceil(retryAfterMs / 1000)),
    });

  return {
    async guard(address, secret, verify) {
      const subjects = [`ip ${address}`];
      const head = secret === null ? null : SECRET_HEAD.exec(secret);
      if (secret !== null && head) {
        subjects.push(`key ${secret.slice(0, head[0].length + PREFIX_RANDOM_CHARS)}`);
      }
      const fail = (): void => {
        for (const subject of subjects) windows.fail(subject);
      };
      const digest = secret === null ? null : hashSecret(secret);
      const blockedFor = Math.max(...subjects.map((subject) => windows.blockedFor(subject)));
      if (blockedFor === 0) {
        try {
          const result = await verify();
          if (digest !== null) valid.add(digest);
          return result;
        } catch (error) {
          if (isMailroomError(error, 'UNAUTHORIZED')) {
            fail();
            if (digest !== null) wrong.add(digest);
          }
          throw error;
        }
      }
      // Over the limit: only a key that may be valid is looked up, and the lookups are bounded.
      if (digest === null || head === null || wrong.has(digest)) {
        fail();
        throw refusal(blockedFor);
      }
      const known = valid.has(digest);
      if (!known && checking >= maxChecks) throw refusal(blockedFor);
      if (!known) checking += 1;
      try {
        const result = await verify();
        valid.add(digest);
        return result;
      } catch (error) {
        if (!isMailroomError(error, 'UNAUTHORIZED')) throw error;
        valid.delete(digest);
        wrong.add(digest);
        fail();
        throw refusal(blockedFor);
      } finally {
        if (!known) checking -= 1;
      }
    },
    get size() {
      return windows.size;
    },
  };
}
