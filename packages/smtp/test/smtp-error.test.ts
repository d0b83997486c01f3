import { MailroomError } from '@mailroom/core';
import { toTransportError } from '@mailroom/smtp';
import { describe, expect, it } from 'vitest';

interface SmtpFailureFields {
  code?: string;
  responseCode?: number;
  command?: string;
  response?: string;
  originalCode?: string;
}

const smtpError = (fields: SmtpFailureFields) => Object.assign(new Error('nodemailer says no'), fields);

describe('toTransportError', () => {
  it.each<[SmtpFailureFields, 'TRANSPORT_PERMANENT' | 'TRANSPORT_TRANSIENT']>([
    [{ code: 'EENVELOPE', responseCode: 550, command: 'RCPT TO' }, 'TRANSPORT_PERMANENT'],
    [{ code: 'EMESSAGE', responseCode: 554, command: 'DATA' }, 'TRANSPORT_PERMANENT'],
    [{ code: 'EENVELOPE', responseCode: 553, command: 'MAIL FROM' }, 'TRANSPORT_PERMANENT'],
    [{ code: 'EENVELOPE', responseCode: 452, command: 'RCPT TO' }, 'TRANSPORT_TRANSIENT'],
    [{ code: 'EPROTOCOL', responseCode: 421, command: 'CONN' }, 'TRANSPORT_TRANSIENT'],
    // 503 says the session was in the wrong state, not that the message is refused.
    [{ code: 'EPROTOCOL', responseCode: 503, command: 'DATA' }, 'TRANSPORT_TRANSIENT'],
    [{ code: 'EAUTH', responseCode: 535, command: 'AUTH PLAIN' }, 'TRANSPORT_TRANSIENT'],
    [{ code: 'ETIMEDOUT', command: 'CONN' }, 'TRANSPORT_TRANSIENT'],
    [{ code: 'ECONNECTION' }, 'TRANSPORT_TRANSIENT'],
    [{ code: 'ESOCKET', originalCode: 'ECONNREFUSED' }, 'TRANSPORT_TRANSIENT'],
    [{ code: 'ECONNRESET' }, 'TRANSPORT_TRANSIENT'],
    [{ code: 'EPIPE' }, 'TRANSPORT_TRANSIENT'],
    [{ code: 'ETLS' }, 'TRANSPORT_TRANSIENT'],
    [{ code: 'EENVELOPE' }, 'TRANSPORT_PERMANENT'],
    [{}, 'TRANSPORT_TRANSIENT'],
  ])('%o → %s', (fields, code) => {
    const error = toTransportError(smtpError(fields), 'smtp');
    expect(error).toBeInstanceOf(MailroomError);
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(code === 'TRANSPORT_TRANSIENT');
    expect(error.responseCode).toBe(fields.responseCode);
    expect(error.command).toBe(fields.command);
  });

  it('keeps the reply text, the cause and names the source', () => {
    const cause = smtpError({
      code: 'EENVELOPE',
      responseCode: 550,
      command: 'RCPT TO',
      response: '550 5.1.1 unknown user',
    });
    const error = toTransportError(cause, 'smtp');
    expect(error.message).toBe('[smtp] RCPT TO failed: 550 5.1.1 unknown user');
    expect(error.response).toBe('550 5.1.1 unknown user');
    expect(error.cause).toBe(cause);
  });

  it('passes a MailroomError through and wraps what is not an Error', () => {
    const own = new MailroomError('TRANSPORT_PERMANENT', 'already mapped');
    expect(toTransportError(own, 'smtp')).toBe(own);
    expect(toTransportError('boom', 'smtp')).toMatchObject({
      code: 'TRANSPORT_TRANSIENT',
      message: '[smtp] send failed: boom',
    });
  });
});
