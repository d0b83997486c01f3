import {
  BOUNCE_REASONS,
  type BounceReason,
  classifyReason,
  createMailroom,
  type Mailroom,
  MailroomError,
  type OutgoingMessage,
  REASON_NAMES,
  reasonGroup,
} from '@mailroom/core';
import { buildDeliveryStatusNotification, type MemoryTransport, memoryTransport } from '@mailroom/memory';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeCases } from './support/stores.js';

/**
 * Invariant 12 through the engine's effect path (classifier, effects table, store write): over every
 * reason of the taxonomy and random reports, a sender-side reason never suppresses an address, and only
 * a final recipient-hard one suppresses at once. The soft-bounce limit is 1, so that a reason wrongly
 * counted as soft would suppress too.
 */

const DOMAIN = 'bounces.acme.test';
const SENDER = 'news@acme.test';
const RECIPIENTS = 240;

for (const storeCase of storeCases()) {
  describe(`bounce reasons and their effects on ${storeCase.name}`, () => {
    let mailroom: Mailroom;
    let transport: MemoryTransport;
    let projectId = '';
    let secret = '';
    const free: string[] = [];

    beforeAll(async () => {
      transport = memoryTransport();
      mailroom = createMailroom({
        store: await storeCase.make(),
        transport,
        bounces: { domain: DOMAIN, softBounceLimit: 1 },
      });
      const created = await mailroom.admin.createProject({ name: 'Acme' });
      projectId = created.project.id;
      secret = created.secret;
      await mailroom.admin.addSender(projectId, { address: SENDER });
      const addresses = Array.from({ length: RECIPIENTS }, (_, i) => `r${i}@dest${i % 7}.test`);
      await mailroom.broadcast(secret, {
        subject: 'Hi',
        sender: SENDER,
        message: 'Hello',
        recipients: addresses,
      });
      await mailroom.worker.drain();
      free.push(...addresses);
    });
    afterAll(() => mailroom?.close());

    /** A sent message to an address no earlier run used. */
    function next(): OutgoingMessage {
      const address = free.shift();
      const message = address && transport.lastMessageTo(address);
      if (!message) throw new Error('out of recipients');
      return message;
    }

    async function isSuppressed(address: string): Promise<boolean> {
      return (await mailroom.store.findSuppressed(projectId, [address])).length > 0;
    }

    it('a provider bounce of every reason: sender-side never suppresses, recipient-hard only when final', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...REASON_NAMES.filter((r) => reasonGroup(r) !== 'not-a-bounce')),
          fc.constantFrom('hard-bounce' as const, 'soft-bounce' as const),
          fc.constantFrom('ses' as const, 'mailgun' as const),
          async (reason: BounceReason, kind, source) => {
            const message = next();
            // No words and no status: the provider's own reason decides, as for SES `NoEmail`.
            const receipt = await mailroom.inbound.applyProviderSignal({
              source,
              kind,
              reason,
              messageId: message.messageId,
              address: message.to.address,
            });
            const effect = receipt.effects[0];
            expect(effect?.reason).toBe(reason);
            const group = BOUNCE_REASONS[reason].group;
            const suppressed = await isSuppressed(message.to.address);
            if (group === 'sender-side') {
              expect(effect?.signal).toBe('sender-side');
              expect(suppressed).toBe(false);
            }
            if (group === 'recipient-hard' && kind === 'hard-bounce') expect(suppressed).toBe(true);
            if (group === 'soft') expect(effect?.signal).toBe('soft-bounce');
          },
        ),
        { numRuns: 60 },
      );
    });

    it('a DSN with any status and words: what suppresses is a final recipient-hard reason, never a sender-side one', async () => {
      const status = fc.oneof(
        fc.constantFrom('5.7.26', '5.7.1', '5.1.1', '5.2.2', '5.7.606', '4.7.0', '5.0.0', '5.4.7'),
        fc.tuple(fc.constantFrom('4', '5'), fc.nat(7), fc.nat(30)).map(([a, b, c]) => `${a}.${b}.${c}`),
      );
      const words = fc.oneof(
        fc.constantFrom(
          "550 5.7.26 Unauthenticated email is not accepted due to domain's DMARC policy",
          '550 5.7.606 Access denied, banned sending IP [192.0.2.1]',
          '554 5.7.1 Service unavailable; Client host blocked using zen.spamhaus.org',
          '550 5.1.1 The email account that you tried to reach does not exist',
          '552 5.2.2 The email account that you tried to reach is over quota',
          '421 4.7.0 Try again later, closing connection (rate limited)',
          '550 5.7.1 Message rejected as spam by Content Filtering',
          '554 5.4.7 delivery time expired',
          '550 5.1.1 <a@example.com> - 192.0.2.1 has sent to too many recipients this hour. IB607',
        ),
        fc.string({ maxLength: 60 }).map((s) => `550 ${s.replace(/[\r\n]/g, ' ')}`),
      );
      await fc.assert(
        fc.asyncProperty(status, words, async (s, diagnostic) => {
          const message = next();
          const raw = buildDeliveryStatusNotification(
            {
              message,
              returnPath: message.envelopeFrom as string,
              arrivedAt: new Date(),
              host: 'mx.dest.test',
            },
            { status: s, diagnostic },
          );
          const receipt = await mailroom.inbound.receive(raw, {
            envelopeTo: [message.envelopeFrom as string],
          });
          const suppressed = await isSuppressed(message.to.address);
          const effect = receipt.effects[0];
          if (effect) {
            expect(effect.suppressed).toBe(suppressed);
            if (reasonGroup(effect.reason) === 'sender-side') {
              expect(effect.signal).toBe('sender-side');
              expect(suppressed).toBe(false);
            }
            if (suppressed) expect(['hard-bounce', 'soft-bounce']).toContain(effect.signal);
          }
          // The classifier's verdict on the report's own fields agrees: sender-side never suppresses.
          const verdict = classifyReason({ status: s, diagnostic: `smtp; ${diagnostic}` });
          if (verdict.group === 'sender-side') expect(suppressed).toBe(false);
        }),
        { numRuns: 80 },
      );
    });

    it('a refusal at send time of every sender-side reason suppresses nothing: blocks of the sender are held, the others fail', async () => {
      const refusals: Record<string, string> = {
        'dmarc@gmail.test': "550 5.7.26 Unauthenticated email is not accepted due to domain's DMARC policy",
        'banned@outlook.test': '550 5.7.606 Access denied, banned sending IP [192.0.2.1]',
        'spam@yahoo.test': '554 5.7.1 Message rejected as spam by Content Filtering',
        'rate@godaddy.test':
          '550 5.1.1 <a@example.com> - 192.0.2.1 has sent to too many recipients this hour. IB607',
        'unknown@example.test': '550 5.1.1 no such user',
      };
      const t = memoryTransport({
        failWith: (m) => {
          const reply = refusals[m.to.address];
          return reply
            ? new MailroomError('TRANSPORT_PERMANENT', reply, {
                response: reply,
                responseCode: 550,
                command: 'RCPT TO',
              })
            : undefined;
        },
      });
      const engine = createMailroom({
        store: await storeCase.make(),
        transport: t,
        bounces: { domain: DOMAIN },
      });
      try {
        const { project, secret: s } = await engine.admin.createProject({ name: 'Refused' });
        await engine.admin.addSender(project.id, { address: SENDER });
        const { ref: r } = await engine.broadcast(s, {
          subject: 'Hi',
          sender: SENDER,
          message: 'x',
          recipients: Object.keys(refusals),
        });
        await engine.worker.drain();
        const suppressed = await engine.store.findSuppressed(project.id, Object.keys(refusals));
        expect(suppressed.map((x) => x.address)).toEqual(['unknown@example.test']);
        const classes = (await engine.listEvents(s, { types: ['email.bounced'], limit: 10 })).items
          .map((e) => `${e.data.delivery?.address} ${e.data.bounce?.class} ${e.data.bounce?.reason}`)
          .sort();
        expect(classes).toEqual([
          'banned@outlook.test sender-side blocked',
          'dmarc@gmail.test sender-side authfailure',
          'rate@godaddy.test sender-side speeding',
          'spam@yahoo.test sender-side spamdetected',
          'unknown@example.test recipient-hard userunknown',
        ]);
        // A block of the sender (banned, DMARC) is held until the destination is resumed (docs/retries.md);
        // the rate limit and the spam verdict fail; the unknown user is a hard bounce told at once.
        expect((await engine.getMailing(s, r)).counts).toMatchObject({ queued: 2, failed: 2, bounced: 1 });
      } finally {
        await engine.close();
      }
    });
  });
}
