import {
  composeFor,
  createMailroom,
  fromMessageTransport,
  type MessageTransport,
  type OutgoingMessage,
} from '@mailroom/core';
import { memoryStore } from '@mailroom/memory';
import { describe, expect, it } from 'vitest';

/** A transport of the contract before issue 34: `send` takes the message as fields. */
function oldTransport(): MessageTransport & { got: OutgoingMessage[]; closed: boolean } {
  const got: OutgoingMessage[] = [];
  return {
    name: 'old',
    capabilities: { dkim: true, maxConcurrency: 2 },
    got,
    closed: false,
    async send(message) {
      got.push(message);
      return {
        messageId: message.messageId,
        accepted: [message.to.address],
        rejected: [],
        response: '250 old',
      };
    },
    async close() {
      this.closed = true;
    },
  };
}

describe('fromMessageTransport (deprecated): a transport of the old contract keeps working', () => {
  it('is handed the fields the core composed, with the VERP sender and the mailing, and closes', async () => {
    const old = oldTransport();
    const transport = fromMessageTransport(old);
    expect(transport.capabilities).toEqual({ dkim: false, maxConcurrency: 2, fields: true });
    const mailroom = createMailroom({
      store: memoryStore(),
      transport,
      bounces: { domain: 'bounces.acme.test' },
      worker: { renderThreads: 1, flushMs: 10 },
    });
    try {
      const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
      await mailroom.admin.addSender(project.id, { address: 'news@acme.test', name: 'Acme' });
      const { ref } = await mailroom.send(secret, {
        subject: 'Hello {{ recipient.firstName }}',
        sender: 'news@acme.test',
        message: 'Hi',
        recipients: { address: 'ada@example.test', name: 'Ada Lovelace' },
      });
      await mailroom.worker.drain();
      expect(old.got).toHaveLength(1);
      expect(old.got[0]).toMatchObject({
        subject: 'Hello Ada',
        to: { address: 'ada@example.test', name: 'Ada Lovelace' },
        from: { address: 'news@acme.test' },
        envelopeFrom: expect.stringMatching(/^b\+.+@bounces\.acme\.test$/),
        mailing: { projectId: project.id, kind: 'message', ref },
      });
      expect((await mailroom.getDelivery(secret, ref, 'ada@example.test')).lastResponse).toBe('250 old');
    } finally {
      await mailroom.close();
    }
    await transport.close?.();
    expect(old.closed).toBe(true);
  });

  it('refuses bytes composed without the fields', async () => {
    const transport = fromMessageTransport(oldTransport());
    const message: OutgoingMessage = {
      messageId: '<m@acme.test>',
      from: { address: 'news@acme.test', name: '' },
      to: { address: 'ada@example.test', name: '' },
      subject: 'x',
      text: 'x',
      attachments: [],
      headers: {},
    };
    const { fields: _dropped, ...bytesOnly } = composeFor(transport, message);
    await expect(transport.send(bytesOnly)).rejects.toMatchObject({ code: 'TRANSPORT_PERMANENT' });
  });
});
