import { createMailroom, type Mailroom, MailroomError, type OutgoingMessage } from '@mailroom/core';
import { type MemoryTransport, memoryTransport } from '@mailroom/memory';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { inboundFixture } from '../packages/core/test/inbound-fixtures.js';
import { storeCases } from './support/stores.js';

/**
 * `mailroom.inbound.receive`: DSNs, ARF reports and auto-replies mailed to VERP return paths, applied to
 * the deliveries they name, on every store.
 */

const DOMAIN = 'bounces.acme.test';
const SENDER = 'news@acme.test';

for (const storeCase of storeCases()) {
  describe(`inbound signals on ${storeCase.name}`, () => {
    let mailroom: Mailroom;
    let transport: MemoryTransport;
    afterEach(() => mailroom?.close());

    async function setup(softBounceLimit?: number) {
      transport = memoryTransport();
      mailroom = createMailroom({
        store: await storeCase.make(),
        transport,
        bounces: { domain: DOMAIN, ...(softBounceLimit ? { softBounceLimit } : {}) },
      });
      const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
      await mailroom.admin.addSender(project.id, { address: SENDER });
      return { project, secret };
    }

    async function sendTo(secret: string, to: string): Promise<{ ref: string; message: OutgoingMessage }> {
      const { ref } = await mailroom.send(secret, {
        subject: 'Hi',
        sender: SENDER,
        message: 'Hello',
        recipients: to,
      });
      await mailroom.worker.drain();
      const message = transport.lastMessageTo(to);
      if (!message) throw new Error(`nothing sent to ${to}`);
      return { ref, message };
    }

    const fixture = (name: string, m: OutgoingMessage, messageId = m.messageId) =>
      inboundFixture(name, { returnPath: m.envelopeFrom ?? '', recipient: m.to.address, messageId });

    it('every message goes out with a VERP envelope sender; From stays', async () => {
      const { secret } = await setup();
      const { message } = await sendTo(secret, 'ann@example.org');
      expect(message.envelopeFrom).toMatch(/^b\+dlv_[a-z0-9]+-[0-9a-f]{16}@bounces\.acme\.test$/);
      expect(message.from.address).toBe(SENDER);
    });

    it('a hard-bounce DSN marks the delivery bounced and suppresses the address; a repeat changes nothing', async () => {
      const { secret } = await setup();
      const seen: string[] = [];
      mailroom.on('inbound', (e) => seen.push(`${e.signal}:${e.address}`));
      const { ref, message } = await sendTo(secret, 'ann@example.org');
      const raw = fixture('dsn-postfix-hard', message);
      const receipt = await mailroom.inbound.receive(raw, { envelopeTo: [message.envelopeFrom as string] });
      expect(receipt).toMatchObject({ outcome: 'applied', report: 'bounce' });
      expect(receipt.effects[0]).toMatchObject({
        signal: 'hard-bounce',
        reason: 'userunknown',
        status: '5.1.1',
        deliveryChanged: true,
        suppressed: true,
      });
      const delivery = await mailroom.getDelivery(secret, ref, 'ann@example.org');
      expect(delivery.status).toBe('bounced');
      expect(delivery.lastError).toContain('5.1.1');
      expect((await mailroom.getMailing(secret, ref)).counts.bounced).toBe(1);
      expect(seen).toEqual(['hard-bounce:ann@example.org']);
      expect(
        (await mailroom.inbound.receive(raw, { envelopeTo: [message.envelopeFrom as string] })).outcome,
      ).toBe('duplicate');
      // A later send to the address is suppressed.
      const later = await mailroom.send(secret, {
        subject: 'Again',
        sender: SENDER,
        message: 'Hi',
        recipients: 'ann@example.org',
      });
      await mailroom.worker.drain();
      expect((await mailroom.getDelivery(secret, later.ref, 'ann@example.org')).status).toBe('suppressed');
      expect(transport.messagesTo('ann@example.org')).toHaveLength(1);
    });

    it('plain-text bounces of common MTAs bounce too', async () => {
      const { secret } = await setup();
      for (const name of ['text-postfix', 'text-exim', 'text-qmail', 'text-exchange', 'text-gmail']) {
        const to = `${name}@example.org`;
        const { ref, message } = await sendTo(secret, to);
        const receipt = await mailroom.inbound.receive(fixture(name, message), {
          envelopeTo: [message.envelopeFrom as string],
        });
        expect(receipt.outcome, name).toBe('applied');
        expect((await mailroom.getDelivery(secret, ref, to)).status, name).toBe('bounced');
      }
    });

    it('soft bounces: recorded; the configured number in a row suppresses', async () => {
      const { project, secret } = await setup(2);
      const first = await sendTo(secret, 'full@example.org');
      const r1 = await mailroom.inbound.receive(fixture('dsn-delayed', first.message), {
        envelopeTo: [first.message.envelopeFrom as string],
      });
      expect(r1.effects[0]).toMatchObject({ signal: 'soft-bounce', suppressed: false });
      const d1 = await mailroom.getDelivery(secret, first.ref, 'full@example.org');
      expect(d1.status).toBe('sent');
      expect(d1.lastError).toContain('4.4.1');
      // The same delivery's second delay notice counts once.
      await mailroom.inbound.receive(fixture('text-exim-delay', first.message), {
        envelopeTo: [first.message.envelopeFrom as string],
      });
      expect(await mailroom.store.findSuppressed(project.id, ['full@example.org'])).toEqual([]);
      // A full mailbox is a recipient-side soft bounce: it counts towards bounces.mailboxUnavailable (3 over
      // 14 days by default), not towards the streak.
      const full = await sendTo(secret, 'full@example.org');
      const rf = await mailroom.inbound.receive(fixture('text-gmail-full', full.message), {
        envelopeTo: [full.message.envelopeFrom as string],
      });
      expect(rf.effects[0]).toMatchObject({
        signal: 'soft-bounce',
        reason: 'mailboxfull',
        suppressed: false,
      });
      const second = await sendTo(secret, 'full@example.org');
      const r2 = await mailroom.inbound.receive(fixture('text-exim-delay', second.message), {
        envelopeTo: [second.message.envelopeFrom as string],
      });
      expect(r2.effects[0]).toMatchObject({ signal: 'soft-bounce', suppressed: true });
      const events = (await mailroom.listEvents(secret, { types: ['email.bounced'], limit: 10 })).items;
      expect(events.map((e) => (e.data.bounce as { class: string }).class)).toEqual(['soft', 'soft', 'soft']);
      expect((await mailroom.store.findSuppressed(project.id, ['full@example.org']))[0]?.reason).toBe(
        'soft-bounce',
      );
    });

    it('a sender-side DSN (5.7.26 DMARC) marks the delivery bounced and never suppresses', async () => {
      const { project, secret } = await setup(1);
      const { ref, message } = await sendTo(secret, 'ann@gmail.test');
      const receipt = await mailroom.inbound.receive(fixture('dsn-dmarc', message), {
        envelopeTo: [message.envelopeFrom as string],
      });
      expect(receipt.effects[0]).toMatchObject({
        signal: 'sender-side',
        reason: 'authfailure',
        status: '5.7.26',
        deliveryChanged: true,
        suppressed: false,
      });
      const delivery = await mailroom.getDelivery(secret, ref, 'ann@gmail.test');
      expect(delivery.status).toBe('bounced');
      expect(delivery.lastError).toContain('sender-side bounce (authfailure): 5.7.26');
      // Not even with a soft-bounce limit of 1: a sender-side refusal says nothing of the address.
      expect(await mailroom.store.findSuppressed(project.id, ['ann@gmail.test'])).toEqual([]);
      const [event] = (await mailroom.listEvents(secret, { types: ['email.bounced'], limit: 10 })).items;
      expect(event?.data.bounce).toMatchObject({
        reason: 'authfailure',
        class: 'sender-side',
        status: '5.7.26',
        source: 'dsn',
      });
      expect(event?.data.bounce?.diagnostic).toContain("domain's DMARC policy");
      expect(
        await mailroom.store.countInboundSignals({ projectId: project.id, kinds: ['sender-side'] }),
      ).toEqual([{ kind: 'sender-side', domain: 'gmail.test', reason: 'authfailure', count: 1 }]);
      // The next send to the address goes out.
      const again = await sendTo(secret, 'ann@gmail.test');
      expect((await mailroom.getDelivery(secret, again.ref, 'ann@gmail.test')).status).toBe('sent');
    });

    it('the return-path token is authoritative: no or a foreign Message-ID, or another recipient, still applies', async () => {
      const { project, secret } = await setup();
      // Headers only, no Message-ID (text-postfix returns none).
      const a = await sendTo(secret, 'ann@example.org');
      const none = await mailroom.inbound.receive(fixture('text-postfix', a.message), {
        envelopeTo: [a.message.envelopeFrom as string],
      });
      expect(none.outcome).toBe('applied');
      expect((await mailroom.getDelivery(secret, a.ref, 'ann@example.org')).status).toBe('bounced');
      // A list or forwarder that re-sent the message under its own Message-ID, to an alias.
      const b = await sendTo(secret, 'bob@example.org');
      const forwarded = inboundFixture('dsn-postfix-hard', {
        returnPath: b.message.envelopeFrom as string,
        recipient: 'robert@forward.example.net',
        messageId: '<list-1234@lists.example.net>',
      });
      const r = await mailroom.inbound.receive(forwarded, { envelopeTo: [b.message.envelopeFrom as string] });
      expect(r.effects[0]).toMatchObject({ signal: 'hard-bounce', reason: 'userunknown', suppressed: true });
      const delivery = await mailroom.getDelivery(secret, b.ref, 'bob@example.org');
      expect(delivery.status).toBe('bounced');
      const [signal] = await mailroom.store.listInboundSignals(delivery.id);
      expect(signal).toMatchObject({
        address: 'bob@example.org',
        reportedAddress: 'robert@forward.example.net',
        reportedMessageId: '<list-1234@lists.example.net>',
        reason: 'userunknown',
      });
      const [event] = (
        await mailroom.listEvents(secret, {
          types: ['email.bounced'],
          address: 'bob@example.org',
          limit: 10,
        })
      ).items;
      expect(event?.data.bounce).toMatchObject({
        reported_address: 'robert@forward.example.net',
        reported_message_id: '<list-1234@lists.example.net>',
      });
      expect(await mailroom.store.findSuppressed(project.id, ['robert@forward.example.net'])).toEqual([]);
    });

    it('a synchronous sender-side refusal (550 5.7.26 at DATA) holds the delivery without suppressing', async () => {
      transport = memoryTransport({
        failWith: (m) =>
          m.to.address.endsWith('@gmail.test')
            ? new MailroomError('TRANSPORT_PERMANENT', '550 5.7.26 DMARC policy violation', {
                response:
                  "550-5.7.26 Unauthenticated email from acme.test is not accepted due to domain's DMARC policy",
                responseCode: 550,
                command: 'DATA',
              })
            : undefined,
      });
      mailroom = createMailroom({ store: await storeCase.make(), transport, bounces: { domain: DOMAIN } });
      const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
      await mailroom.admin.addSender(project.id, { address: SENDER });
      const { ref } = await mailroom.broadcast(secret, {
        subject: 'Hi',
        sender: SENDER,
        message: 'x',
        recipients: ['ann@gmail.test', 'bob@gmail.test'],
      });
      await mailroom.worker.drain();
      // A block of the sender (DMARC): held until its destination or broadcast is resumed, not failed.
      const ann = await mailroom.getDelivery(secret, ref, 'ann@gmail.test');
      expect(ann.status).toBe('queued');
      expect(ann.lastError).toMatch(/held until resumed/);
      expect(await mailroom.store.findSuppressed(project.id, ['ann@gmail.test', 'bob@gmail.test'])).toEqual(
        [],
      );
      const bounced = (await mailroom.listEvents(secret, { types: ['email.bounced'], limit: 10 })).items;
      expect(
        bounced.map((e) => [e.data.bounce?.class, e.data.bounce?.reason, e.data.bounce?.source]),
      ).toEqual([
        ['sender-side', 'authfailure', 'smtp'],
        ['sender-side', 'authfailure', 'smtp'],
      ]);
      const mailing = await mailroom.store.getMailing(project.id, ref);
      expect(
        await mailroom.store.countInboundSignals({
          projectId: project.id,
          kinds: ['sender-side'],
          mailingId: mailing?.id as string,
        }),
      ).toEqual([{ kind: 'sender-side', domain: 'gmail.test', reason: 'authfailure', count: 2 }]);
      expect(await mailroom.bouncesByDomain(secret, { ref })).toEqual([
        {
          domain: 'gmail.test',
          recipientHard: 0,
          soft: 0,
          senderSide: 2,
          reasons: [{ class: 'sender-side', reason: 'authfailure', count: 2 }],
        },
      ]);
      const other = await mailroom.admin.createProject({ name: 'Other' });
      await expect(mailroom.bouncesByDomain(other.secret, { ref })).rejects.toMatchObject({
        code: 'NOT_FOUND',
      });
      expect(await mailroom.bouncesByDomain(other.secret)).toEqual([]);
    });

    it('an ARF complaint marks complained, suppresses and unsubscribes, found by token or by Message-ID alone', async () => {
      const { project, secret } = await setup();
      const a = await sendTo(secret, 'ann@example.org');
      const viaToken = await mailroom.inbound.receive(fixture('arf-complaint', a.message), {
        envelopeTo: [`fbl@${DOMAIN}`],
      });
      expect(viaToken).toMatchObject({ outcome: 'applied', report: 'complaint' });
      expect((await mailroom.getDelivery(secret, a.ref, 'ann@example.org')).status).toBe('complained');
      expect((await mailroom.store.getProfile(project.id, 'ann@example.org'))?.status).toBe('unsubscribed');
      expect((await mailroom.store.findSuppressed(project.id, ['ann@example.org']))[0]?.reason).toBe(
        'complaint',
      );
      // A complaint unsubscribes from everything, and the consent history says so (issue 38).
      expect((await mailroom.topics.history(secret, 'ann@example.org')).data).toMatchObject([
        { change: 'unsubscribe', source: 'complaint', state: 'unsubscribed', mailingRef: a.ref, topic: null },
      ]);
      // An FBL that strips the return path: the Message-ID finds it.
      const b = await sendTo(secret, 'bob@example.org');
      const stripped = inboundFixture('arf-complaint', {
        returnPath: 'someone@elsewhere.test',
        recipient: 'bob@example.org',
        messageId: b.message.messageId,
      });
      expect((await mailroom.inbound.receive(stripped, { envelopeTo: [`fbl@${DOMAIN}`] })).outcome).toBe(
        'applied',
      );
      expect((await mailroom.getDelivery(secret, b.ref, 'bob@example.org')).status).toBe('complained');
      const events = (await mailroom.listEvents(secret, { types: ['email.complained'], limit: 10 })).items;
      expect(events.map((e) => e.data.delivery?.address)).toEqual(['ann@example.org', 'bob@example.org']);
    });

    it('a synchronous 5.1.1 refusal marks the delivery bounced, suppresses and emits email.bounced', async () => {
      transport = memoryTransport({
        failWith: (m) =>
          m.to.address === 'nobody@example.org'
            ? new MailroomError('TRANSPORT_PERMANENT', '550 5.1.1 no such user', {
                response: '550 5.1.1 no such user',
                responseCode: 550,
                command: 'RCPT TO',
              })
            : undefined,
      });
      mailroom = createMailroom({ store: await storeCase.make(), transport, bounces: { domain: DOMAIN } });
      const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
      await mailroom.admin.addSender(project.id, { address: SENDER });
      const { ref } = await mailroom.send(secret, {
        subject: 'Hi',
        sender: SENDER,
        message: 'x',
        recipients: 'nobody@example.org',
      });
      await mailroom.worker.drain();
      const types = (await mailroom.listEvents(secret, { limit: 10 })).items.map((e) => e.type).sort();
      expect(types).toEqual(['email.bounced']);
      const [delivery] = await mailroom.listDeliveries(secret, ref);
      expect(delivery).toMatchObject({ status: 'bounced', attempts: 1 });
      const bounced = (await mailroom.listEvents(secret, { types: ['email.bounced'], limit: 10 })).items[0];
      expect(bounced?.data.bounce).toEqual({
        reason: 'userunknown',
        class: 'recipient-hard',
        status: '5.1.1',
        diagnostic: '550 5.1.1 no such user',
        source: 'smtp',
      });
      expect((await mailroom.store.findSuppressed(project.id, ['nobody@example.org']))[0]?.reason).toBe(
        'hard-bounce',
      );
    });

    it('auto-replies, forged tokens and reports naming another delivery change nothing', async () => {
      const { project, secret } = await setup();
      const { ref, message } = await sendTo(secret, 'ann@example.org');
      const rcpt = { envelopeTo: [message.envelopeFrom as string] };
      for (const name of ['auto-ooo', 'auto-vacation', 'auto-challenge', 'not-a-bounce']) {
        expect((await mailroom.inbound.receive(fixture(name, message), rcpt)).outcome, name).toBe('ignored');
      }
      const forged = (message.envelopeFrom as string).replace(
        /-([0-9a-f])/,
        (_m, c: string) => `-${c === '0' ? '1' : '0'}`,
      );
      const f = await mailroom.inbound.receive(fixture('dsn-postfix-hard', message), {
        envelopeTo: [forged],
      });
      expect(f).toMatchObject({
        outcome: 'ignored',
        code: 'forged-token',
        reason: 'forged or edited return-path token',
      });
      // Another project's delivery named in the report, under this delivery's token.
      const other = await mailroom.admin.createProject({ name: 'Other' });
      await mailroom.admin.addSender(other.project.id, { address: SENDER });
      const theirs = await sendTo(other.secret, 'ann@example.org');
      const crossed = fixture('dsn-postfix-hard', message, theirs.message.messageId);
      const c = await mailroom.inbound.receive(crossed, rcpt);
      expect(c).toMatchObject({ outcome: 'ignored', code: 'other-project' });
      // Another delivery of the same project named under this delivery's token: neither is trusted.
      const mine = await sendTo(secret, 'bob@example.org');
      const sameProject = fixture('dsn-postfix-hard', message, mine.message.messageId);
      expect(await mailroom.inbound.receive(sameProject, rcpt)).toMatchObject({
        outcome: 'ignored',
        code: 'other-delivery',
        reason: 'the report names another message than its return path',
      });
      expect((await mailroom.getDelivery(secret, mine.ref, 'bob@example.org')).status).toBe('sent');
      expect((await mailroom.getDelivery(secret, ref, 'ann@example.org')).status).toBe('sent');
      expect((await mailroom.getDelivery(other.secret, theirs.ref, 'ann@example.org')).status).toBe('sent');
      expect(await mailroom.store.findSuppressed(project.id, ['ann@example.org'])).toEqual([]);
      expect(await mailroom.store.findSuppressed(other.project.id, ['ann@example.org'])).toEqual([]);
    });

    it('a report that outruns the record of its send is deferred (retryable), then applied', async () => {
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let captured: OutgoingMessage | undefined;
      mailroom = createMailroom({
        store: await storeCase.make(),
        transport: {
          name: 'held',
          capabilities: { dkim: false, maxConcurrency: 1, fields: true },
          async send(m) {
            captured = m.fields;
            await gate;
            return { messageId: m.messageId, accepted: m.envelope.to, rejected: [], response: '250 ok' };
          },
        },
        bounces: { domain: DOMAIN },
      });
      const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
      await mailroom.admin.addSender(project.id, { address: SENDER });
      const { ref } = await mailroom.send(secret, {
        subject: 'Hi',
        sender: SENDER,
        message: 'x',
        recipients: 'ann@example.org',
      });
      const draining = mailroom.worker.drain();
      await vi.waitFor(() => expect(captured).toBeDefined());
      const message = captured as OutgoingMessage;
      const raw = fixture('dsn-postfix-hard', message);
      const rcpt = { envelopeTo: [message.envelopeFrom as string] };
      await expect(mailroom.inbound.receive(raw, rcpt)).rejects.toMatchObject({
        code: 'INBOUND_DEFERRED',
        retryable: true,
      });
      release();
      await draining;
      expect((await mailroom.inbound.receive(raw, rcpt)).outcome).toBe('applied');
      expect((await mailroom.getDelivery(secret, ref, 'ann@example.org')).status).toBe('bounced');
    });

    it('without the bounces option the envelope sender is the From address and inbound mail is ignored', async () => {
      transport = memoryTransport();
      mailroom = createMailroom({ store: await storeCase.make(), transport });
      const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
      await mailroom.admin.addSender(project.id, { address: SENDER });
      const { message } = await sendTo(secret, 'ann@example.org');
      expect(message.envelopeFrom).toBeUndefined();
      expect(mailroom.inbound.enabled).toBe(false);
      expect((await mailroom.inbound.receive(Buffer.from('x'), { envelopeTo: ['b+x@y.test'] })).outcome).toBe(
        'ignored',
      );
    });
  });
}
