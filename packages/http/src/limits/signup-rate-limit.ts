import { isMailroomError, MailroomError } from '@mailroom/core';
import { createRequestRateLimiter, type RequestRateLimiter } from './request-rate-limit.js';

/** One limit of the public signup endpoint: a token bucket per key. */
export interface SignupLimit {
  /** Sustained signups per minute per key. */
  perMinute: number;
  /** Signups a key may make at once before the sustained rate applies. @default perMinute */
  burst?: number;
}

/** The limits of `POST /subscribe/:formRef` (in this process, like the API's rate limit). */
export interface SignupRateLimitOptions {
  /** Per client address (after `trustProxy`). @default { perMinute: 10, burst: 10 } */
  perIp?: SignupLimit;
  /** Per signed-up address, whatever the client. @default { perMinute: 0.1, burst: 3 } (3, then one per 10 minutes) */
  perAddress?: SignupLimit;
}

/** Takes a token per client and per address; `RATE_LIMITED` (429 with `Retry-After`) when none is left. */
export interface SignupRateLimiter {
  takeIp(ip: string): void;
  takeAddress(address: string): void;
}

const DEFAULT_PER_IP: SignupLimit = { perMinute: 10, burst: 10 };
const DEFAULT_PER_ADDRESS: SignupLimit = { perMinute: 0.1, burst: 3 };

/**
 * The signup endpoint's limits: a flood from one client is refused before its body is read (a refusal
 * costs a map lookup), and one address cannot be mailed confirmations in a loop by many clients. The
 * answer is the same for every address (known or not): it never tells whether one exists.
 */
export function createSignupRateLimiter(options: SignupRateLimitOptions = {}): SignupRateLimiter {
  const bucket = (limit: SignupLimit): RequestRateLimiter =>
    createRequestRateLimiter({
      perProjectPerSecond: limit.perMinute / 60,
      burst: limit.burst ?? limit.perMinute,
    });
  const perIp = bucket(options.perIp ?? DEFAULT_PER_IP);
  const perAddress = bucket(options.perAddress ?? DEFAULT_PER_ADDRESS);
  const take = (limiter: RequestRateLimiter, key: string) => {
    try {
      limiter.take(key);
    } catch (error) {
      if (!isMailroomError(error, 'RATE_LIMITED')) throw error;
      throw new MailroomError('RATE_LIMITED', 'Too many signups; retry later', {
        ...(error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter }),
      });
    }
  };
  return {
    takeIp: (ip) => take(perIp, ip),
    // Case folded: `Ann@x.test` and `ann@x.test` reach one mailbox in practice.
    takeAddress: (address) => take(perAddress, address.trim().toLowerCase()),
  };
}
