import { composeFor, MailroomError, type OutgoingMessage } from '@mailroom/core';
import { describe, expect, it } from 'vitest';
import { memoryTransport } from '../src/index.js';

function message(to: string, overrides: Partial<OutgoingMessage> = {}): OutgoingMessage {
  return {
    messageId: `<${Math.random().toString(36).slice(2)}@mailroom.test>`,
    from: { address: 'news@example.com', name: 'News' },
    to: { address: to, name: '' },
    subject: `To ${to}`,
    text: 'Hello',
    attachments: [],
    headers: {},
    ...overrides,
  };
}

describe('memoryTransport outbox', () => {
  it('keeps accepted messages in send order and answers with a receipt', async () => {
    const transport = memoryTransport();
    const a = message('a@example.com');
    const b = message('b@example.com');
    expect(await transport.send(composeFor(transport, a))).toEqual({
      messageId: a.messageId,
      accepted: ['a@example.com'],
      rejected: [],
      response: '250 OK (memory)',
    });
    await transport.send(composeFor(transport, b));
    expect(transport.outbox).toEqual([a, b]);
    expect(transport.capabilities).toEqual({ dkim: false, maxConcurrency: 64, fields: true });
  });

  it('finds messages by address, the domain case-insensitively, the local part exactly', async () => {
    const transport = memoryTransport();
    const first = message('Ann@Example.COM', { subject: 'first' });
    const second = message('Ann@example.com', { subject: 'second' });
    await transport.send(composeFor(transport, first));
    await transport.send(composeFor(transport, message('ann@example.com')));
    await transport.send(composeFor(transport, second));
    expect(transport.messagesTo('Ann@EXAMPLE.com').map((m) => m.subject)).toEqual(['first', 'second']);
    expect(transport.lastMessageTo('Ann@example.com')?.subject).toBe('second');
    expect(transport.lastMessageTo('nobody@example.com')).toBeUndefined();
  });

  it('stores a copy, and clear() empties the same outbox array', async () => {
    const transport = memoryTransport();
    const { outbox } = transport;
    const m = message('a@example.com');
    await transport.send(composeFor(transport, m));
    m.subject = 'mutated after send';
    expect(outbox[0]?.subject).toBe('To a@example.com');
    transport.clear();
    expect(transport.outbox).toBe(outbox);
    expect(outbox).toEqual([]);
  });

  it('failWith rejects chosen messages with the given error and keeps them out of the outbox', async () => {
    const permanent = new MailroomError('TRANSPORT_PERMANENT', '550 5.1.1 User unknown', {
      responseCode: 550,
    });
    const transport = memoryTransport({
      failWith: (m) => (m.to.address === 'bounce@example.com' ? permanent : undefined),
    });
    await expect(transport.send(composeFor(transport, message('bounce@example.com')))).rejects.toBe(
      permanent,
    );
    await transport.send(composeFor(transport, message('ok@example.com')));
    expect(transport.outbox.map((m) => m.to.address)).toEqual(['ok@example.com']);
  });

  it('delayMs holds each send in flight', async () => {
    const transport = memoryTransport({ delayMs: 30, maxConcurrency: 2 });
    const pending = transport.send(composeFor(transport, message('a@example.com')));
    expect(transport.outbox).toHaveLength(0);
    await pending;
    expect(transport.outbox).toHaveLength(1);
    expect(transport.capabilities.maxConcurrency).toBe(2);
  });
});
