import { type Backpressure, MailroomError } from '../base/errors.js';
import type { DeliveryOutcome } from '../store/delivery-queue.js';
import type { ClaimedDelivery } from '../store/records.js';

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

/** The settings {@link failureOutcome} reads. */
export interface RetrySettings {
  /** Attempts (claims) before a transient failure becomes final. */
  maxAttempts: number;
  /** No retry is scheduled later than this long after the delivery became due. */
  maxAgeMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

/** Any failure as a `MailroomError`: something unknown is taken as transient (retries are capped). */
export function asTransportError(error: unknown): MailroomError {
  if (error instanceof MailroomError) return error;
  return new MailroomError('TRANSPORT_TRANSIENT', error instanceof Error ? error.message : String(error), {
    cause: error,
  });
}

/**
 * The outcome of a failed attempt: a retry (`queued` at a backoff time) when the error is retryable, the
 * delivery has attempts left and the retry would still fall within `maxAgeMs` of `since`; otherwise
 * `failed`. The reply is kept as `lastResponse`, the message as `lastError`.
 *
 * @param since When the delivery first became due (its creation, or the mailing's `scheduleFor`).
 */
export function failureOutcome(
  delivery: Pick<ClaimedDelivery, 'attempts'>,
  error: unknown,
  settings: RetrySettings,
  since: Date,
  now: Date,
  random?: () => number,
): DeliveryOutcome {
  const err = asTransportError(error);
  const lastResponse = err.response ?? (err.responseCode ? String(err.responseCode) : null);
  if (err.retryable && delivery.attempts < settings.maxAttempts) {
    const at =
      now.getTime() + retryDelay(delivery.attempts, settings.retryBaseMs, settings.retryMaxMs, random);
    if (!(settings.maxAgeMs > 0) || at - since.getTime() <= settings.maxAgeMs) {
      return { status: 'queued', nextAttemptAt: new Date(at), lastResponse, lastError: err.message, now };
    }
    return {
      status: 'failed',
      lastResponse,
      lastError: `${err.message} (gave up: older than ${settings.maxAgeMs} ms)`,
      now,
    };
  }
  return { status: 'failed', lastResponse, lastError: err.message, now };
}

/**
 * The outcome of an attempt refused because the account may not send for now (`backpressure: 'pause'`):
 * queued again for the end of the pause, whatever its attempts, since the message was never judged.
 * (`maxAgeMs` still applies through the next attempt's own check.)
 */
export function pausedOutcome(error: unknown, resumesInMs: number, now: Date): DeliveryOutcome {
  const err = asTransportError(error);
  return {
    status: 'queued',
    nextAttemptAt: new Date(now.getTime() + Math.max(resumesInMs, 10)),
    lastResponse: err.response ?? (err.responseCode ? String(err.responseCode) : null),
    lastError: `${err.message} (sending paused for ${Math.ceil(resumesInMs / 1000)} s)`,
    now,
  };
}

/**
 * What a failed send asks of the worker besides a retry (see {@link Backpressure}): the transport's own
 * word when it gave one; else `slow-down` for the replies that say the relay is overloaded or refusing
 * this client for now (421 "service not available, closing", 454 "temporary authentication/TLS
 * failure", which providers also use for throttling); else `none`.
 */
export function backpressureOf(error: unknown): Backpressure {
  if (!(error instanceof MailroomError)) return 'none';
  if (error.backpressure !== undefined) return error.backpressure;
  return error.responseCode === 421 || error.responseCode === 454 ? 'slow-down' : 'none';
}

/** True when the worker should slow down (see {@link backpressureOf}). */
export function isSlowDown(error: unknown): boolean {
  return backpressureOf(error) === 'slow-down';
}
