import { composeFor } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from '../../../test/support/smtp-sink.js';
import { poolSender } from '../src/pool-sender.js';
import { directSender } from '../src/smtp-transport.js';
import { makeMessage } from './fixtures.js';

// The pool sender relies on members of nodemailer that are not its documented API (package.json holds
// nodemailer to the minor they were read from). When one changes, sending still works, only slower: these
// tests fail instead, on a real nodemailer pool against a real SMTP server.
describe('the SMTP pool sender', () => {
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink();
  });
  afterAll(() => sink.close());

  it("writes every message's DATA itself on the pool smtpTransport creates", async () => {
    const transport = smtpTransport({ host: sink.host, port: sink.port, maxConnections: 2 });
    try {
      const sender = directSender(transport);
      expect(sender, 'smtpTransport fell back to sendMail: the pool lacks _createConnection').toBeDefined();
      const messages = Array.from({ length: 5 }, (_, i) =>
        // A line that starts with a dot: the direct writer stuffs it as nodemailer's stream would.
        makeMessage({ text: `Message ${i}\n.hidden unless stuffed\nend` }),
      );
      await Promise.all(messages.map((message) => transport.send(composeFor(transport, message))));
      expect(sender?.stats).toEqual({ direct: 5 });
      const received = await sink.waitFor(messages.length);
      for (const message of messages) {
        const got = received.find((m) => m.parsed.messageId === message.messageId);
        expect(got?.parsed.text).toBe(`${message.text}\n`);
      }
    } finally {
      await transport.close();
    }
  });

  it('says when and why a connection kept the stock data stream (debug logging), and still sends', async () => {
    const pool = nodemailer.createTransport({
      pool: true,
      host: sink.host,
      port: sink.port,
      ignoreTLS: true,
      debug: true,
      logger: false,
    });
    try {
      const sender = poolSender((pool as unknown as { transporter: unknown }).transporter);
      const raw = Buffer.from('Subject: stock\r\nMessage-ID: <stock@mailroom.test>\r\n\r\nHello\r\n');
      await sender?.send(raw, { from: 'a@example.com', to: ['b@example.org'] }, '<stock@mailroom.test>');
      expect(sender?.stats).toEqual({ direct: 0, fallback: 'debug logging' });
      expect(sink.messages.some((m) => m.parsed.messageId === '<stock@mailroom.test>')).toBe(true);
    } finally {
      pool.close();
    }
  });
});
