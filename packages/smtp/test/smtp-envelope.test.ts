import { composeFor } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from '../../../test/support/smtp-sink.js';
import { makeMessage } from './fixtures.js';

// The kit covers the pool's fast path; these cover the paths it does not: an injected transporter
// (sendMail with raw bytes) and send with a VERP envelope.
describe('envelope sender (VERP)', () => {
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink();
  });
  afterAll(() => sink.close());

  const verp = 'b+dlv_0abc-0123456789abcdef@bounces.acme.test';

  it('an injected transporter sends MAIL FROM the envelope sender; header From unchanged', async () => {
    const injected = nodemailer.createTransport({ host: sink.host, port: sink.port, ignoreTLS: true });
    const transport = smtpTransport(injected);
    try {
      const message = makeMessage({ envelopeFrom: verp });
      await transport.send(composeFor(transport, message));
      const got = sink.messages.find((m) => m.parsed.messageId === message.messageId);
      expect(got?.envelope.mailFrom).toBe(verp);
      expect(got?.parsed.from?.value[0]?.address).toBe('sender@example.com');
    } finally {
      await transport.close();
    }
  });

  it('send on the pool uses the given envelope sender (sendRaw: its deprecated alias)', async () => {
    const transport = smtpTransport({ host: sink.host, port: sink.port });
    try {
      const message = makeMessage();
      const raw = Buffer.from(
        `From: sender@example.com\r\nTo: recipient@example.org\r\nMessage-ID: ${message.messageId}\r\nSubject: raw\r\n\r\nHi\r\n`,
      );
      expect(transport.sendRaw).toBe(transport.send);
      await transport.send({
        messageId: message.messageId,
        envelope: { from: verp, to: ['recipient@example.org'] },
        raw,
      });
      const got = sink.messages.find((m) => m.parsed.messageId === message.messageId);
      expect(got?.envelope.mailFrom).toBe(verp);
    } finally {
      await transport.close();
    }
  });
});
