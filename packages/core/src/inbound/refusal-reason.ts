/**
 * A relay's refusal at send time (a 5xx reply to RCPT TO, DATA, MAIL FROM...) read as a bounce: the same
 * classifier and the same table of effects as a DSN, so a sender-side refusal (a DMARC failure, a
 * blocklisted IP, a rate limit) fails the delivery without suppressing the address.
 */
import type { MailroomError } from '../base/errors.js';
import { classifyReason } from './classify-reason.js';
import { type SignalFacts, signalKindOf } from './inbound-effects.js';
import type { SmtpCommand } from './inbound-report.js';
import { isRecipientSideSoft } from './mailbox-unavailable.js';
import { statusCodeIn } from './report-fields.js';

/** nodemailer's command names (and the transports' own) to the classifier's. */
const COMMANDS: Record<string, SmtpCommand> = {
  CONN: 'CONN',
  GREETING: 'CONN',
  EHLO: 'HELO',
  HELO: 'HELO',
  LHLO: 'HELO',
  'MAIL FROM': 'MAIL',
  MAIL: 'MAIL',
  'RCPT TO': 'RCPT',
  RCPT: 'RCPT',
  DATA: 'DATA',
};

/**
 * The facts of a permanent refusal, or undefined when the error is no reply of a mail server (a
 * refusal the transport made itself, a render failure, an API error without an SMTP code): only a 5xx
 * reply, or a text quoting a 5.x.x status, is read as a bounce.
 */
export function refusalFacts(error: MailroomError): SignalFacts | undefined {
  if (error.code !== 'TRANSPORT_PERMANENT') return undefined;
  const text = error.response ?? error.message;
  const status = statusCodeIn(text);
  const code = error.responseCode;
  const isReply = code !== undefined ? code >= 500 && code < 600 : status?.startsWith('5.') === true;
  if (!isReply) return undefined;
  const verdict = classifyReason({
    status,
    replyCode: code === undefined ? null : String(code),
    diagnostic: text,
    command: error.command ? (COMMANDS[error.command.toUpperCase()] ?? null) : null,
  });
  const kind = signalKindOf(verdict);
  if (!kind || kind === 'delivered') return undefined;
  return { kind, source: 'smtp', reason: verdict.reason, status, diagnostic: text, final: verdict.final };
}

/**
 * The facts of a temporary refusal (a 4xx reply) worth recording: a block of the sender (not retried), or
 * a full mailbox or suspended account (counted towards `bounces.mailboxUnavailable` while it is retried);
 * neither final. Undefined for any other reply.
 */
export function temporaryRefusalFacts(error: MailroomError): SignalFacts | undefined {
  const text = error.response ?? error.message;
  const status = statusCodeIn(text);
  const code = error.responseCode;
  const verdict = classifyReason({
    status,
    replyCode: code === undefined ? null : String(code),
    diagnostic: text,
    command: error.command ? (COMMANDS[error.command.toUpperCase()] ?? null) : null,
  });
  const kind = signalKindOf(verdict);
  const recorded = kind === 'sender-side' || (kind === 'soft-bounce' && isRecipientSideSoft(verdict.reason));
  if (!recorded) return undefined;
  return {
    kind,
    source: 'smtp',
    reason: verdict.reason,
    status,
    diagnostic: text,
    final: false,
  };
}
