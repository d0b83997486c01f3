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
      const second = await sendTo(secret, 'full@example.org');
      const r2 = await mailroom.inbound.receive(fixture('text-gmail-full', second.message), {
        envelopeTo: [second.message.envelopeFrom as string],
      });
      expect(r2.effects[0]).toMatchObject({ signal: 'soft-bounce', suppressed: true });
      const events = (await mailroom.listEvents(secret, { types: ['email.bounced'], limit: 10 })).items;
      expect(events.map((e) => (e.data.bounce as { class: string }).class)).toEqual(['soft', 'soft']);
      expect((await mailroom.store.findSuppressed(project.id, ['full@example.org']))[0]?.reason).toBe(
        'soft-bounce',
      );
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
      expect(bounced?.data.bounce).toEqual({ class: 'hard', diagnostic: '550 5.1.1 no such user' });
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
      expect(f).toMatchObject({ outcome: 'ignored', reason: 'forged or edited return-path token' });
      // Another project's delivery named in the report, under this delivery's token.
      const other = await mailroom.admin.createProject({ name: 'Other' });
      await mailroom.admin.addSender(other.project.id, { address: SENDER });
      const theirs = await sendTo(other.secret, 'ann@example.org');
      const crossed = fixture('dsn-postfix-hard', message, theirs.message.messageId);
      const c = await mailroom.inbound.receive(crossed, rcpt);
      expect(c).toMatchObject({
        outcome: 'ignored',
        reason: 'the report names another message than its return path',
      });
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
          capabilities: { dkim: false, maxConcurrency: 1 },
          async send(m) {
            captured = m;
            await gate;
            return { messageId: m.messageId, accepted: [m.to.address], rejected: [], response: '250 ok' };
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
