import { createMailroom, hashedAddress, type Mailroom } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/**
 * The evidence consent keeps (issue 38): a send past consent (`includeUnsubscribed`, an admin act) is a
 * record in the history of each person it reached and of nobody else; an erased address is kept only as
 * its hash, and no later message reaches it by mistake (single messages included) until its suppression
 * is lifted.
 */

const SENDER = 'legal@acme.test';

describe('consent evidence', () => {
  let mailroom: Mailroom;
  let transport: ReturnType<typeof memoryTransport>;
  let secret: string;
  let projectId: string;

  const sentTo = (subject: string) =>
    transport.outbox
      .filter((m) => m.subject === subject)
      .map((m) => m.to.address)
      .sort();

  beforeEach(async () => {
    transport = memoryTransport();
    mailroom = createMailroom({
      store: memoryStore(),
      transport,
      unsubscribe: { baseUrl: 'https://mail.acme.test/api', secret: 'a-test-secret-of-32-characters!!' },
    });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    projectId = created.project.id;
    await mailroom.admin.addSender(projectId, { address: SENDER });
    await mailroom.admin.createAudienceGroup(projectId, { ref: 'all' });
    // Three members: one unsubscribed from everything.
    await mailroom.broadcast(secret, {
      subject: 'Welcome',
      sender: SENDER,
      message: 'Hi',
      recipients: ['ann@example.test', 'bob@example.test', 'cat@example.test'].map((address) => ({
        address,
      })),
      options: { acquiringAudience: 'all' },
    });
    await mailroom.worker.drain();
    await mailroom.admin.setSubscription(projectId, 'ann@example.test', 'unsubscribed');
  });

  afterEach(async () => {
    await mailroom.close();
  });

  it('records every send past consent in the history of each person it reached, and only theirs', async () => {
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'Terms changed',
      sender: SENDER,
      message: 'Our terms changed',
      sources: [{ ref: 'all', includeUnsubscribed: true }],
    });
    await mailroom.worker.drain();
    expect(sentTo('Terms changed')).toEqual(['ann@example.test', 'bob@example.test', 'cat@example.test']);
    const ann = (await mailroom.topics.history(secret, 'ann@example.test')).data;
    expect(ann.at(-1)).toMatchObject({
      change: 'sent-unsubscribed',
      source: 'broadcast',
      mailingRef: ref,
      topic: null,
      ip: null,
    });
    expect(ann.filter((r) => r.change === 'sent-unsubscribed')).toHaveLength(1);
    // Subscribed people received it within their consent: nothing to record.
    expect((await mailroom.topics.history(secret, 'bob@example.test')).data).toEqual([]);
    // Without includeUnsubscribed nobody past consent is reached, and nothing is recorded.
    await mailroom.broadcast(secret, {
      subject: 'News',
      sender: SENDER,
      message: 'News',
      sources: [{ ref: 'all' }],
    });
    await mailroom.worker.drain();
    expect(sentTo('News')).toEqual(['bob@example.test', 'cat@example.test']);
    expect(
      (await mailroom.topics.history(secret, 'ann@example.test')).data.filter(
        (r) => r.change === 'sent-unsubscribed',
      ),
    ).toHaveLength(1);
  });

  it('keeps an erased address as a hash that no later message reaches, until its suppression is lifted', async () => {
    await mailroom.audience.eraseProfile(secret, 'bob@example.test');
    // The app still has Bob somewhere and sends to him again: a broadcast and a single message.
    await mailroom.broadcast(secret, {
      subject: 'Again',
      sender: SENDER,
      message: 'Hi',
      recipients: [{ address: 'bob@example.test' }, { address: 'cat@example.test' }],
    });
    const single = await mailroom.send(secret, {
      subject: 'Receipt',
      sender: SENDER,
      message: 'Thanks',
      recipients: 'bob@example.test',
    });
    await mailroom.worker.drain();
    expect(sentTo('Again')).toEqual(['cat@example.test']);
    expect(sentTo('Receipt')).toEqual([]);
    const status = await mailroom.getMessage(secret, single.ref);
    expect(status.recipients[0]).toMatchObject({ status: 'suppressed', lastError: 'address was erased' });
    // Nothing of the address is kept but its hash.
    const erased = await mailroom.store.findErasedAddresses(projectId, [
      hashedAddress(projectId, 'bob@example.test'),
    ]);
    expect(erased).toHaveLength(1);
    expect(erased[0]).toMatch(/^sha256:[0-9a-f]{64}$/);

    // Bob came back and asked for mail: lifting the suppression of his address lifts the hash too.
    await mailroom.suppressions.lift(secret, 'bob@example.test');
    await mailroom.send(secret, {
      subject: 'Receipt 2',
      sender: SENDER,
      message: 'Thanks',
      recipients: 'bob@example.test',
    });
    await mailroom.worker.drain();
    expect(sentTo('Receipt 2')).toEqual(['bob@example.test']);
  });
});
