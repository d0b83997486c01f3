/**
 * Maps what the SES v2 client throws to a `MailroomError`: `TRANSPORT_TRANSIENT` when a later attempt may
 * pass (with what the worker should do besides retrying), `TRANSPORT_PERMANENT` when it will not.
 */
import { type Backpressure, isMailroomError, MailroomError, type MailroomErrorOptions } from '@mailroom/core';

/** The fields of an SDK error that the mapping reads. */
interface SdkFailure {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: unknown };
}

// SES refuses this message for good: its content, or its sender's domain.
const PERMANENT = new Set([
  'MessageRejected',
  'MailFromDomainNotVerifiedException',
  'MailFromDomainNotVerified',
  'BadRequestException',
]);

// SES throttles the account: fewer sends at once.
const SLOW_DOWN = new Set([
  'TooManyRequestsException',
  'Throttling',
  'ThrottlingException',
  'LimitExceededException',
]);

// The account may not send for now (v2 `SendingPausedException`, v1 `AccountSendingPausedException`),
// or at all until AWS lifts a suspension: the worker pauses rather than fail every delivery.
const PAUSE = new Set([
  'SendingPausedException',
  'AccountSendingPausedException',
  'AccountSendingPaused',
  'AccountSuspendedException',
]);

/**
 * Classifies an error from a send or a verify.
 *
 * - `MessageRejected`, `MailFromDomainNotVerifiedException`, `BadRequestException` → `TRANSPORT_PERMANENT`;
 * - `TooManyRequestsException`, throttling, `LimitExceededException` → `TRANSPORT_TRANSIENT`, `backpressure: 'slow-down'`
 *   (as SMTP 421);
 * - `SendingPausedException`, `AccountSendingPausedException`, `AccountSuspendedException` →
 *   `TRANSPORT_TRANSIENT`, `backpressure: 'pause'`;
 * - anything else (a refused connection, a timeout, a 5xx, missing or refused credentials, an unknown
 *   configuration set) → `TRANSPORT_TRANSIENT`: the account or the network is at fault, not the message.
 *
 * `response` holds the error's name and text, for example `MessageRejected: Email address is not verified.`
 *
 * @param error What the SDK rejected with.
 * @param source Name prefixed to the message, for example `ses`.
 */
export function toSesError(error: unknown, source: string): MailroomError {
  if (isMailroomError(error)) return error;
  const failure: SdkFailure =
    typeof error === 'object' && error !== null ? error : { message: String(error) };
  const name = typeof failure.name === 'string' ? failure.name : 'Error';
  const code = typeof failure.code === 'string' ? failure.code : undefined;
  const text =
    typeof failure.message === 'string' && failure.message !== '' ? failure.message : 'unknown error';
  const status = failure.$metadata?.httpStatusCode;
  const options: MailroomErrorOptions = { cause: error, source };
  let backpressure: Backpressure | undefined;
  if (SLOW_DOWN.has(name) || status === 429) backpressure = 'slow-down';
  else if (PAUSE.has(name)) backpressure = 'pause';
  if (backpressure) options.backpressure = backpressure;
  // Only answers of the service carry a name worth keeping as its reply; network errors keep their code.
  if (typeof status === 'number') options.response = `${name}: ${text}`;
  const permanent = PERMANENT.has(name);
  const what =
    typeof status === 'number' ? `SES answered ${status} ${name}` : `send failed (${code ?? name})`;
  return new MailroomError(
    permanent ? 'TRANSPORT_PERMANENT' : 'TRANSPORT_TRANSIENT',
    `${what}: ${text}`,
    options,
  );
}
