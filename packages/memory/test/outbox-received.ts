import type { OutgoingMessage } from '@mailroom/core';
import type { ReceivedMessage } from '@mailroom/core/testing';

/** An outbox in the conformance kit's shape: it holds the messages as given, so they are what arrived. */
export function outboxReceived(outbox: readonly OutgoingMessage[]): ReceivedMessage[] {
  return outbox.map((m) => ({
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
  }));
}
