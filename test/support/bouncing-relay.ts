/**
 * A loopback relay that behaves like an MTA that later finds it cannot deliver: it accepts every message
 * (250), then, for the recipients it was told about, mails a report back to the message's envelope sender
 * through the bounce domain's inbound port, the way a real MTA sends a DSN (null sender, to the Return-Path).
 */
import type { AddressInfo } from 'node:net';
import { smtpTransport } from '@mailroom/smtp';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { inboundFixture } from '../../packages/core/test/inbound-fixtures.js';

/** What the relay mails back for a recipient: a fixture of `packages/core/test/fixtures/inbound`. */
export interface BouncePlan {
  fixture: string;
  /** Turn the return path into another address before mailing back (a forged token, another domain). */
  returnPath?: (envelopeFrom: string) => string;
}

/** One report the relay mailed back, with the inbound listener's answer. */
export interface MailedBack {
  recipient: string;
  to: string;
  /** `250 Ok: applied` or the refusal (`550 ...` for a recipient outside the bounce domain). */
  reply: string;
}

export interface BouncingRelay {
  readonly port: number;
  /** Port of the inbound listener reports go to (set once it is known). */
  inboundPort: number;
  /** Messages accepted, by recipient. */
  readonly accepted: Array<{ recipient: string; mailFrom: string; messageId: string }>;
  readonly mailedBack: MailedBack[];
  /**
   * Holds the reports until {@link releaseReports}: a relay that reports a broadcast's failures after it
   * took the whole of it, so that a test of how reports are read does not race the guard, which pauses a
   * broadcast on the first few score of sender-side refusals.
   */
  holdReports(): void;
  /** Mails back every held report (and the later ones at once). */
  releaseReports(): void;
  close(): Promise<void>;
}

/** Starts the relay on 127.0.0.1; `plans` says what to mail back for which recipient. */
export async function startBouncingRelay(plans: Record<string, BouncePlan>): Promise<BouncingRelay> {
  const accepted: BouncingRelay['accepted'] = [];
  const mailedBack: MailedBack[] = [];
  const relay = {
    inboundPort: 0,
  };
  let held: Array<() => void> | undefined;
  const report = (send: () => void) => {
    if (held) held.push(send);
    else setTimeout(send, 20);
  };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        const parsed = await simpleParser(Buffer.concat(chunks));
        const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        for (const r of session.envelope.rcptTo) {
          accepted.push({ recipient: r.address, mailFrom, messageId: parsed.messageId ?? '' });
          const plan = plans[r.address];
          // After the 250, as an MTA does once delivery failed downstream.
          if (plan) report(() => void mailBack(r.address, mailFrom, parsed.messageId ?? '', plan));
        }
        callback(null, 'Ok: queued');
      });
    },
  });

  // One pooled client, as a relay keeps a few connections to a busy destination.
  let client: ReturnType<typeof smtpTransport> | undefined;

  async function mailBack(recipient: string, envelopeFrom: string, messageId: string, plan: BouncePlan) {
    const to = plan.returnPath ? plan.returnPath(envelopeFrom) : envelopeFrom;
    const raw = inboundFixture(plan.fixture, { returnPath: to, recipient, messageId });
    client ??= smtpTransport({
      host: '127.0.0.1',
      port: relay.inboundPort,
      ignoreTLS: true,
      maxConnections: 4,
    });
    // As an MTA does, a report deferred with 4xx (it outran the record of the send) is sent again later.
    for (let attempt = 1; ; attempt++) {
      try {
        const receipt = await client.send({
          messageId: '<report@relay.test>',
          envelope: { from: '', to: [to] },
          raw,
        });
        mailedBack.push({ recipient, to, reply: receipt.response });
        return;
      } catch (error) {
        const reply = (error as { response?: string }).response ?? String(error);
        if (!/^4\d\d/.test(reply) || attempt >= 100) {
          mailedBack.push({ recipient, to, reply });
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.on('error', () => {});
  return Object.assign(relay, {
    port: (server.server.address() as AddressInfo).port,
    accepted,
    mailedBack,
    holdReports() {
      held ??= [];
    },
    releaseReports() {
      const waiting = held ?? [];
      held = undefined;
      for (const send of waiting) setTimeout(send, 20);
    },
    async close() {
      await client?.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
