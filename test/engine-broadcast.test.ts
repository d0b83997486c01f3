import { createMailroom, type Mailroom } from '@mailroom/core';
import { type MemoryTransport, memoryTransport } from '@mailroom/memory';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { storeCases } from './support/stores.js';

describe.each(storeCases())('engine end to end on $name', ({ make }) => {
  let mailroom: Mailroom;
  let transport: MemoryTransport;
  let secret: string;
  let projectId: string;

  beforeEach(async () => {
    transport = memoryTransport();
    mailroom = createMailroom({ store: await make(), transport });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    projectId = created.project.id;
    await mailroom.admin.addSender(projectId, { address: 'news@Acme.TEST', name: 'Acme News' });
    await mailroom.admin.createTemplate(projectId, {
      ref: 'welcome',
      format: 'html',
      subject: 'Hello {{ recipient.firstName }}',
      source:
        '<p>Hi {{ profile.firstName }}, your code is {{ code }} and color {{ color | default: "none" }}.</p>',
    });
  });

  afterEach(async () => {
    await mailroom.close();
  });

  it('sends a broadcast in two batches with repeated addresses, plus a single message, once per address', async () => {
    const batch1 = Array.from({ length: 250 }, (_, i) => ({
      address: `user${i}@example.test`,
      name: i % 2 === 0 ? `First${i} Last${i}` : undefined,
      variables: { code: `A${i}` },
    }));
    // The second batch repeats 10 addresses of the first (with another domain case) and adds 240 new ones.
    const batch2 = [
      ...Array.from({ length: 10 }, (_, i) => ({
        address: `user${i}@EXAMPLE.test`,
        variables: { code: `B${i}` },
      })),
      ...Array.from({ length: 240 }, (_, i) => ({
        address: `late${i}@example.test`,
        variables: { code: `C${i}` },
      })),
    ];
    const first = await mailroom.broadcast(secret, {
      subject: 'News for {{ recipient.firstName }} ({{ code }})',
      sender: { address: 'news@acme.test' },
      template: { ref: 'welcome', variables: { code: 'GLOBAL', color: 'blue' } },
      recipients: batch1,
    });
    expect(first.ref).toMatch(/^bc_/);
    expect(first.batch).toEqual({ seq: 1, recipients: 250, inserted: 250 });
    const second = await mailroom.broadcast(secret, { broadcastRef: first.ref, recipients: batch2 });
    expect(second.ref).toBe(first.ref);
    expect(second.batch).toEqual({ seq: 2, recipients: 250, inserted: 240 });

    const single = await mailroom.send(secret, {
      subject: 'Receipt',
      sender: 'Billing <news@acme.test>',
      message: '<p>Thanks {{ recipient.firstName }}, {{ note }}</p>',
      template: undefined,
      recipients: [{ address: 'buyer@example.test', variables: { note: '<script>alert(1)</script>' } }],
    });
    expect(single.ref).toMatch(/^msg_/);

    await mailroom.worker.drain();

    expect(transport.outbox).toHaveLength(491);
    const addresses = transport.outbox.map((m) => m.to.address.toLowerCase());
    expect(new Set(addresses).size).toBe(491);

    // Recipient variables override the global ones; the first batch's data wins for a repeated address.
    const u0 = transport.messagesTo('user0@example.test');
    expect(u0).toHaveLength(1);
    expect(u0[0]?.subject).toBe('News for First0 (A0)');
    expect(u0[0]?.html).toContain('Hi First0, your code is A0 and color blue.');
    expect(u0[0]?.to.name).toBe('First0 Last0');
    // A recipient without a name gets the part of the address before the at-sign.
    const u1 = transport.messagesTo('user1@example.test')[0];
    expect(u1?.to.name).toBe('user1');
    expect(u1?.subject).toBe('News for user1 (A1)');
    const late = transport.messagesTo('late7@example.test')[0];
    expect(late?.html).toContain('your code is C7');
    expect(late?.from).toEqual({ address: 'news@acme.test', name: 'Acme News' });
    // A text alternative is derived from the HTML.
    expect(late?.text).toContain('your code is C7');

    // HTML escaping of a hostile variable in the single message; display name from the string sender.
    const receipt = transport.messagesTo('buyer@example.test');
    expect(receipt).toHaveLength(1);
    expect(receipt[0]?.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(receipt[0]?.html).not.toContain('<script>');
    expect(receipt[0]?.from.name).toBe('Billing');

    const view = await mailroom.getMailing(secret, first.ref);
    expect(view.status).toBe('completed');
    expect(view.counts.sent).toBe(490);
    expect(view.batchCount).toBe(2);
    expect((await mailroom.getMailing(secret, single.ref)).status).toBe('completed');

    // Every recipient was indexed into the audience, with explicit names kept.
    const profile = await mailroom.store.getProfile(projectId, 'user0@example.test');
    expect(profile?.name).toBe('First0 Last0');
    expect(await mailroom.store.getProfile(projectId, 'late239@example.test')).toBeDefined();
  });

  it('keeps one Message-ID per delivery and reopens a completed broadcast for a later batch', async () => {
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'S',
      sender: 'news@acme.test',
      message: 'Hello {{ name }}',
      recipients: ['a@example.test'],
    });
    await mailroom.worker.drain();
    expect((await mailroom.getMailing(secret, ref)).status).toBe('completed');
    const later = await mailroom.broadcast(secret, { broadcastRef: ref, recipients: 'b@example.test' });
    expect(later.status).toBe('sending');
    await mailroom.worker.drain();
    expect((await mailroom.getMailing(secret, ref)).status).toBe('completed');
    expect(transport.outbox.map((m) => m.to.address)).toEqual(['a@example.test', 'b@example.test']);
    const ids = transport.outbox.map((m) => m.messageId);
    expect(ids[0]).toMatch(/^<dlv_[a-z0-9]+@acme\.test>$/);
    expect(new Set(ids).size).toBe(2);
    // A text message stays text-only.
    expect(transport.outbox[0]?.html).toBeUndefined();
  });

  it('indexes recipients into the acquiring audience and refuses an unknown group with nothing written', async () => {
    await mailroom.admin.createAudienceGroup(projectId, { ref: 'vip' });
    await mailroom.send(secret, {
      subject: 'S',
      sender: 'news@acme.test',
      message: 'm',
      recipients: [{ address: 'v@example.test', name: 'Vera V' }],
      options: { acquiringAudience: 'vip' },
    });
    const groups = await mailroom.store.listGroups(projectId);
    expect(groups.find((g) => g.ref === 'vip')?.members).toBe(1);
    await expect(
      mailroom.send(secret, {
        subject: 'S',
        sender: 'news@acme.test',
        message: 'm',
        recipients: ['w@example.test'],
        options: { acquiringAudience: 'nope' },
      }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await mailroom.store.getProfile(projectId, 'w@example.test')).toBeUndefined();
    expect(await mailroom.store.listMailings(projectId, 'message', { limit: 10 })).toHaveLength(1);
  });

  it('accepts a sandbox secret, records the message and never delivers it', async () => {
    const sandboxSecret = await mailroom.admin.createSecret(projectId, 'sandbox');
    expect(sandboxSecret).toMatch(/^sk_sandbox_/);
    const { ref, status } = await mailroom.send(sandboxSecret, {
      subject: 'S',
      sender: 'news@acme.test',
      message: 'm',
      recipients: ['s@example.test'],
    });
    expect(status).toBe('completed');
    await mailroom.worker.drain();
    expect(transport.outbox).toHaveLength(0);
    const [delivery] = await mailroom.listDeliveries(secret, ref);
    expect(delivery?.status).toBe('skipped');
  });

  it('skips unsubscribed and suppressed addresses in broadcasts, and suppressed ones in single sends', async () => {
    await mailroom.admin.setSubscription(projectId, 'gone@example.test', 'unsubscribed');
    await mailroom.admin.suppress(projectId, 'bounced@Example.TEST', 'hard-bounce');
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'S',
      sender: 'news@acme.test',
      message: 'm',
      recipients: ['gone@example.test', 'bounced@example.test', 'ok@example.test'],
    });
    const msg = await mailroom.send(secret, {
      subject: 'S',
      sender: 'news@acme.test',
      message: 'm',
      recipients: ['bounced@example.test', 'gone@example.test'],
    });
    await mailroom.worker.drain();
    expect(transport.outbox.map((m) => m.to.address).sort()).toEqual([
      'gone@example.test',
      'ok@example.test',
    ]);
    const counts = (await mailroom.getMailing(secret, ref)).counts;
    expect(counts).toMatchObject({ sent: 1, skipped: 1, suppressed: 1 });
    expect((await mailroom.getMailing(secret, msg.ref)).counts).toMatchObject({ sent: 1, suppressed: 1 });
  });

  it('an unsubscribed profile keeps broadcasts from any ASCII case of its address, as a suppression does', async () => {
    await mailroom.admin.setSubscription(projectId, 'Gone@example.test', 'unsubscribed');
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'S',
      sender: 'news@acme.test',
      message: 'm',
      recipients: ['gone@example.test', 'GONE@example.test', 'Gone@example.test', 'ok@example.test'],
    });
    // A single message is not a broadcast: the unsubscribed status does not apply (the folded match neither).
    const msg = await mailroom.send(secret, {
      subject: 'S',
      sender: 'news@acme.test',
      message: 'm',
      recipients: ['gone@example.test'],
    });
    await mailroom.worker.drain();
    expect(transport.outbox.map((m) => m.to.address).sort()).toEqual([
      'gone@example.test',
      'ok@example.test',
    ]);
    expect((await mailroom.getMailing(secret, ref)).counts).toMatchObject({ sent: 1, skipped: 3 });
    expect((await mailroom.getMailing(secret, msg.ref)).counts).toMatchObject({ sent: 1 });
  });

  it('fails one recipient with strictVariables and names the missing variable', async () => {
    const strict = createMailroom({ store: mailroom.store, transport, strictVariables: true });
    const { ref } = await strict.broadcast(secret, {
      subject: 'Hi {{ nickname }}',
      sender: 'news@acme.test',
      message: 'Body',
      recipients: [{ address: 'n@example.test', variables: { nickname: 'Nic' } }, 'x@example.test'],
    });
    await strict.worker.drain();
    expect(transport.outbox.map((m) => m.subject)).toEqual(['Hi Nic']);
    const failed = await strict.listDeliveries(secret, ref, { status: 'failed' });
    expect(failed).toHaveLength(1);
    expect(failed[0]?.lastError).toContain('nickname');
  });

  it('retries a transient transport failure and fails a permanent one exactly once', async () => {
    const { MailroomError } = await import('@mailroom/core');
    let transientLeft = 2;
    const flaky = memoryTransport({
      failWith: (m) => {
        if (m.to.address === 'temp@example.test' && transientLeft-- > 0) {
          return new MailroomError('TRANSPORT_TRANSIENT', '451 try later', { responseCode: 451 });
        }
        if (m.to.address === 'perm@example.test') {
          return new MailroomError('TRANSPORT_PERMANENT', '550 5.1.1 no such user', {
            responseCode: 550,
            response: '550 5.1.1 <perm@example.test>: no such user',
          });
        }
        return undefined;
      },
    });
    const engine = createMailroom({
      store: mailroom.store,
      transport: flaky,
      worker: { retryBaseMs: 1, retryMaxMs: 2 },
    });
    const { ref } = await engine.broadcast(secret, {
      subject: 'S',
      sender: 'news@acme.test',
      message: 'm',
      recipients: ['temp@example.test', 'perm@example.test'],
    });
    for (let i = 0; i < 20 && flaky.messagesTo('temp@example.test').length === 0; i++) {
      await engine.worker.drain();
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(flaky.messagesTo('temp@example.test')).toHaveLength(1);
    const [temp] = await engine.listDeliveries(secret, ref, { status: 'sent' });
    expect(temp?.attempts).toBe(3);
    // A 5.1.x "no such user" at once is a hard bounce, as a DSN would say later.
    const [perm] = await engine.listDeliveries(secret, ref, { status: 'bounced' });
    expect(perm?.attempts).toBe(1);
    expect(perm?.lastResponse).toContain('550');
    // A 5.1.x "no such user" adds the address to the project's suppression list.
    expect(await engine.store.findSuppressed(projectId, ['perm@example.test'])).toHaveLength(1);
  });
});
