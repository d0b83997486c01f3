import { transportTestSuite } from '@mailroom/core/testing';
import { memoryTransport } from '../src/index.js';

transportTestSuite('memory', () => {
  const transport = memoryTransport();
  return {
    transport,
    // The outbox holds messages exactly as given, so "received" is the message itself.
    received: async () =>
      transport.outbox.map((m) => ({
        messageId: m.messageId,
        from: m.from,
        to: m.to,
        ...(m.replyTo === undefined ? {} : { replyTo: m.replyTo }),
        subject: m.subject,
        text: m.text,
        ...(m.html === undefined ? {} : { html: m.html }),
        attachments: m.attachments.map((a) => ({ filename: a.filename, content: a.content })),
        headers: m.headers,
        envelopeFrom: m.envelopeFrom ?? m.from.address,
      })),
    close: async () => {},
  };
});
