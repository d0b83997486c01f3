/**
 * Maps what nodemailer throws to a `MailroomError`: `TRANSPORT_TRANSIENT` when a later attempt may
 * pass, `TRANSPORT_PERMANENT` when it will not, keeping the SMTP reply code, command and text.
 */
import { isMailroomError, MailroomError, type MailroomErrorOptions } from '@mailroom/core';

/** The fields of a nodemailer error that the mapping reads. */
interface SmtpFailure {
  message?: unknown;
  code?: unknown;
  responseCode?: unknown;
  command?: unknown;
  response?: unknown;
}

// Refusals nodemailer raises itself, before the server is asked: the message or its address is at fault.
const CLIENT_SIDE_REFUSALS = new Set(['EENVELOPE', 'EMESSAGE']);

// The relay refuses us, not the message: a later attempt may pass once the credentials are fixed,
// and nothing here says the recipient is bad, so it must never look like a bounce.
const SESSION_FAILURES = new Set(['EAUTH', 'ENOAUTH', 'EOAUTH2']);

/**
 * Classifies an error from a send or a verify.
 *
 * - an SMTP reply 5xx (except 503, a session-state reply) → `TRANSPORT_PERMANENT`;
 * - an SMTP reply 4xx (or 503, or an unexpected 2xx/3xx), a timeout, a refused, reset or dropped
 *   connection, a TLS or DNS failure, an authentication failure → `TRANSPORT_TRANSIENT`;
 * - a refusal nodemailer raises before asking the server (`EENVELOPE`/`EMESSAGE` without a reply
 *   code) → `TRANSPORT_PERMANENT`;
 * - anything else → `TRANSPORT_TRANSIENT` (retries are capped by the worker).
 *
 * @param error What nodemailer rejected with.
 * @param source Name prefixed to the message, for example `smtp`.
 */
export function toTransportError(error: unknown, source: string): MailroomError {
  if (isMailroomError(error)) return error;
  const failure: SmtpFailure =
    typeof error === 'object' && error !== null ? error : { message: String(error) };
  const code = typeof failure.code === 'string' ? failure.code : undefined;
  const responseCode = typeof failure.responseCode === 'number' ? failure.responseCode : undefined;
  const command = typeof failure.command === 'string' ? failure.command : undefined;
  const response = typeof failure.response === 'string' ? failure.response : undefined;

  let permanent: boolean;
  if (code !== undefined && SESSION_FAILURES.has(code)) permanent = false;
  else if (responseCode !== undefined)
    permanent = responseCode >= 500 && responseCode < 600 && responseCode !== 503;
  else permanent = code !== undefined && CLIENT_SIDE_REFUSALS.has(code);

  const what = command ? `${command} failed` : 'send failed';
  const detail = response ?? (typeof failure.message === 'string' ? failure.message : 'unknown error');
  const options: MailroomErrorOptions = { cause: error, source };
  if (responseCode !== undefined) options.responseCode = responseCode;
  if (command !== undefined) options.command = command;
  if (response !== undefined) options.response = response;
  return new MailroomError(
    permanent ? 'TRANSPORT_PERMANENT' : 'TRANSPORT_TRANSIENT',
    `${what}: ${detail}`,
    options,
  );
}
