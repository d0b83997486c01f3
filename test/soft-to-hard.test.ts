import { createMailroom, type Mailroom, manualClock } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { afterEach, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';
import { storeCases } from './support/stores.js';

/**
 * Soft bounces that are really hard (issue 35): a relay on 127.0.0.1 that refuses a recipient because its
 * mailbox is full (552 5.2.2, or 452 4.2.2 while it is retried) or its account is disabled (550 5.2.1), with a clock the test controls. Three
 * such refusals on distinct messages within 14 days suppress the address with the reason
 * `mailbox-unavailable`, shown on the contact; one message delivered in between starts the count over;
 * the operator lifts the suppression as any other. On the memory store and SQLite.
 */
const START = new Date('2031-05-04T09:00:00.000Z');
const DAY = 86_400_000;

for (const storeCase of storeCases()) {
  describe(`a full mailbox that keeps failing (${storeCase.name})`, () => {
    let sink: SmtpSink | undefined;
    let mailroom: Mailroom | undefined;
    afterEach(async () => {
      await mailroom?.close();
      await sink?.close();
    });

    /** The engine, a relay whose refusals `refusing` decides, and one message sent with each `send()`. */
    async function setUp() {
      const refusing = new Map<string, { code: number; message: string }>();
      sink = await startSmtpSink({ rejectRecipient: (address) => refusing.get(address) });
      const clock = manualClock(START);
      mailroom = createMailroom({
        store: await storeCase.make(),
        transport: smtpTransport(sink.url),
        clock,
        worker: { pollMs: 10, flushMs: 10 },
      });
      const engine = mailroom;
      const { project, secret } = await engine.admin.createProject({ name: 'Acme' });
      await engine.admin.addSender(project.id, { address: 'news@acme.test' });
      const send = async (address: string) => {
        const { ref } = await engine.broadcast(secret, {
          sender: 'news@acme.test',
          subject: 'News',
          message: 'Hello',
          recipients: [address],
        });
        await engine.worker.drain({ retries: 'leave' });
        const [delivery] = await engine.listDeliveries(secret, ref);
        return delivery?.status;
      };
      const suppression = async (address: string) =>
        (await engine.suppressions.list(secret, { q: address })).items.find((s) => s.address === address);
      return { engine, secret, clock, refusing, send, suppression };
    }

    it('three refusals for a full mailbox within 14 days suppress it as mailbox-unavailable', async () => {
      const { engine, secret, clock, refusing, send, suppression } = await setUp();
      const full = 'full@example.org';
      refusing.set(full, { code: 552, message: '5.2.2 <full@example.org>: Mailbox full' });
      expect(await send(full)).toBe('failed');
      clock.advance(5 * DAY);
      expect(await send(full)).toBe('failed');
      expect(await suppression(full)).toBeUndefined();
      clock.advance(8 * DAY);
      expect(await send(full)).toBe('failed');
      const row = await suppression(full);
      expect(row?.reason).toBe('mailbox-unavailable');
      expect(row?.detail).toMatch(/mailboxfull/);
      // Shown on the contact.
      expect((await engine.audience.getProfile(secret, full)).suppression?.reason).toBe(
        'mailbox-unavailable',
      );
      // The next broadcast does not try it.
      expect(await send(full)).toBe('suppressed');
      // The operator lifts it like any other suppression; the count starts over from then on.
      await engine.suppressions.lift(secret, full);
      expect(await suppression(full)).toBeUndefined();
    });

    it('a full mailbox said as temporary (452 4.2.2) counts once per message while it is retried', async () => {
      const { clock, refusing, send, suppression } = await setUp();
      const full = 'later@example.org';
      refusing.set(full, { code: 452, message: '4.2.2 <later@example.org>: Mailbox full, try again later' });
      // Retried hours later (retries by reason), and counted once however often it is retried.
      expect(await send(full)).toBe('queued');
      clock.advance(DAY);
      expect(await send(full)).toBe('queued');
      expect(await suppression(full)).toBeUndefined();
      clock.advance(DAY);
      expect(await send(full)).toBe('queued');
      expect((await suppression(full))?.reason).toBe('mailbox-unavailable');
    });

    it('a disabled account counts too; refusals spread over more than 14 days do not', async () => {
      const { clock, refusing, send, suppression } = await setUp();
      const away = 'away@example.org';
      refusing.set(away, {
        code: 550,
        message: '5.2.1 The email account that you tried to reach is disabled.',
      });
      expect(await send(away)).toBe('failed');
      clock.advance(10 * DAY);
      expect(await send(away)).toBe('failed');
      clock.advance(10 * DAY);
      // The first refusal is 20 days old: two in the window.
      expect(await send(away)).toBe('failed');
      expect(await suppression(away)).toBeUndefined();
      clock.advance(DAY);
      expect(await send(away)).toBe('failed');
      expect((await suppression(away))?.reason).toBe('mailbox-unavailable');
    });

    it('one delivery in between starts the count over', async () => {
      const { clock, refusing, send, suppression } = await setUp();
      const busy = 'busy@example.org';
      const full = { code: 552, message: '5.2.2 <busy@example.org>: Mailbox full' };
      refusing.set(busy, full);
      expect(await send(busy)).toBe('failed');
      clock.advance(DAY);
      expect(await send(busy)).toBe('failed');
      clock.advance(DAY);
      // The recipient emptied the mailbox: this one is delivered.
      refusing.delete(busy);
      expect(await send(busy)).toBe('sent');
      clock.advance(DAY);
      refusing.set(busy, full);
      expect(await send(busy)).toBe('failed');
      clock.advance(DAY);
      expect(await send(busy)).toBe('failed');
      // Four refusals in four days, but only two since the delivery.
      expect(await suppression(busy)).toBeUndefined();
      clock.advance(DAY);
      expect(await send(busy)).toBe('failed');
      expect((await suppression(busy))?.reason).toBe('mailbox-unavailable');
    });
  });
}
