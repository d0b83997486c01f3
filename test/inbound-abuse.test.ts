import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createMailroom, type InboundMessageEvent, type Logger, type Mailroom } from '@mailroom/core';
import { memoryStore } from '@mailroom/memory';
import { type InboundServer, inboundSmtpServer, smtpTransport } from '@mailroom/smtp';
import { SMTPServer } from 'smtp-server';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { type RawSmtpClient, rawSmtpClient } from './support/smtp-client.js';

/**
 * Issue 30, item 6: the inbound listener under abuse while a 5,000-recipient broadcast sends to a real
 * SMTP sink, all on 127.0.0.1 (other client addresses are other loopback addresses: 127.0.0.2, ...).
 * Connections that never send, past the per-address and the total caps, are refused; a flood of forged
 * return-path tokens is answered without a parse (counted `forged-token`, logged once per window), and
 * past 60 from one address refused at RCPT; a message with 100,000 header lines is refused with 552
 * unparsed; a real DSN from the corpus, mailed to a return path of the broadcast in the middle of it all
 * by an address that flooded, is applied; and the broadcast completes.
 * Correctness only: the sending rate with and without the abuse is compared by `bench/inbound-abuse.ts`.
 */

const DOMAIN = 'bounces.acme.test';
const SENDER = 'news@acme.test';
const RECIPIENTS = 5000;
const CORPUS = new URL('../packages/core/test/fixtures/bounce-corpus/messages/', import.meta.url);

function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (_obj: object, msg?: string) => lines.push(`${level}: ${msg ?? ''}`);
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** A counting sink: drains each message, keeps the return path of the first ones. */
async function countingSink() {
  const state = { count: 0, returnPaths: [] as string[] };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    disableReverseLookup: true,
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        state.count++;
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        if (state.returnPaths.length < 10) state.returnPaths.push(from);
        callback(null, 'Ok');
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    state,
    port: (server.server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A connection from `from` that said EHLO. */
async function greeted(port: number, from: string): Promise<RawSmtpClient> {
  const c = await rawSmtpClient(port, { localAddress: from });
  expect(c.greeting).toMatch(/^220/);
  expect(await c.command('EHLO relay.example')).toMatch(/^250/);
  return c;
}

/**
 * A message as a real client sends it: when its one recipient is refused, RSET instead of DATA; resolves
 * with the reply to the final dot, or with the refusal of the recipient.
 */
async function forgedMessage(c: RawSmtpClient, to: string, data: Buffer): Promise<string> {
  expect(await c.command('MAIL FROM:<>')).toMatch(/^250/);
  const rcpt = await c.command(`RCPT TO:<${to}>`);
  if (!rcpt.startsWith('250')) {
    expect(await c.command('RSET')).toMatch(/^250/);
    return rcpt;
  }
  expect(await c.command('DATA')).toMatch(/^354/);
  return c.command(Buffer.concat([data, Buffer.from('\r\n.\r\n')]));
}

/** One message over an open raw connection; resolves with the reply to its final dot. */
async function rawMessage(c: RawSmtpClient, to: string, data: Buffer): Promise<string> {
  expect(await c.command('MAIL FROM:<>')).toMatch(/^250/);
  expect(await c.command(`RCPT TO:<${to}>`)).toMatch(/^250/);
  expect(await c.command('DATA')).toMatch(/^354/);
  return c.command(Buffer.concat([data, Buffer.from('\r\n.\r\n')]));
}

describe('inbound listener under abuse during a broadcast', () => {
  let mailroom: Mailroom | undefined;
  let server: InboundServer | undefined;
  const held: RawSmtpClient[] = [];
  const closers: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of held) c.close();
    await server?.close();
    await mailroom?.close();
    for (const close of closers) await close();
  });

  it('refuses, drains and caps the abuse; the broadcast completes and a real DSN is applied', async () => {
    const sink = await countingSink();
    closers.push(sink.close);
    const logger = memoryLogger();
    const store = memoryStore();
    mailroom = createMailroom({
      store,
      transport: smtpTransport({ host: '127.0.0.1', port: sink.port, ignoreTLS: true, maxConnections: 5 }),
      logger,
      bounces: { domain: DOMAIN },
    });
    const taken: InboundMessageEvent[] = [];
    mailroom.on('inbound:message', (e) => taken.push(e));
    server = await inboundSmtpServer({
      inbound: mailroom.inbound,
      host: '127.0.0.1',
      port: 0,
      logger,
      maxConnections: 30,
      maxConnectionsPerIp: 10,
      // Long enough that the held connections last the whole test: the caps, not the timeout, refuse.
      socketTimeoutMs: 120_000,
    });
    const port = server.port;

    const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: SENDER });
    let ref: string | undefined;
    for (let i = 0; i < RECIPIENTS; i += 250) {
      const recipients = Array.from({ length: 250 }, (_, j) => `r${i + j}@dest${j % 20}.test`);
      const result = await mailroom.broadcast(
        secret,
        ref
          ? { broadcastRef: ref, recipients }
          : { subject: 'News', sender: SENDER, message: 'Hi', recipients },
      );
      ref ??= result.ref;
    }
    mailroom.worker.start();
    await vi.waitFor(() => expect(sink.state.count).toBeGreaterThan(0), { timeout: 30_000, interval: 20 });

    // 1. Connections that never send: ten from 127.0.0.2 are greeted, the eleventh is refused (per address).
    for (let i = 0; i < 10; i++) {
      const c = await rawSmtpClient(port, { localAddress: '127.0.0.2' });
      expect(c.greeting).toMatch(/^220/);
      held.push(c);
    }
    const overIp = await rawSmtpClient(port, { localAddress: '127.0.0.2' });
    expect(overIp.greeting).toMatch(/^421/);
    overIp.close();
    // Twenty more from two other addresses fill the total cap of 30; one more from anywhere is refused.
    for (const from of ['127.0.0.3', '127.0.0.4']) {
      for (let i = 0; i < 10; i++) {
        const c = await rawSmtpClient(port, { localAddress: from });
        expect(c.greeting).toMatch(/^220/);
        held.push(c);
      }
    }
    const overTotal = await rawSmtpClient(port, { localAddress: '127.0.0.5' });
    expect(overTotal.greeting).toMatch(/^421/);
    overTotal.close();
    // Free the last address's ten places, keep the other twenty idle connections held.
    for (const c of held.splice(20)) c.close();
    await vi.waitFor(async () => {
      const probe = await rawSmtpClient(port, { localAddress: '127.0.0.6' });
      probe.close();
      expect(probe.greeting).toMatch(/^220/);
    });

    // 2. A flood of forged return-path tokens, on two connections, while 20 idle ones are held.
    const sent = sink.state.count;
    const dsn = Buffer.from(
      readFileSync(new URL('lhost-activehunter-01.eml', CORPUS), 'utf8').replace(/\r?\n/g, '\r\n'),
    );
    // Per address, the first 60 a minute (`maxForgedPerMinute`) are taken with 250 and drained unparsed;
    // past that allowance the forged recipient is refused at RCPT, before a byte of the message.
    const forgedReplies: string[][] = [[], []];
    await Promise.all(
      ['127.0.0.7', '127.0.0.8'].map(async (from, n) => {
        const c = await greeted(port, from);
        for (let i = 0; i < 150; i++) {
          const token = `dlv_forged${n}x${i}-${'0123456789abcdef'}`;
          forgedReplies[n]?.push(await forgedMessage(c, `b+${token}@${DOMAIN}`, dsn));
        }
        c.close();
      }),
    );
    for (const replies of forgedReplies) {
      expect(replies).toHaveLength(150);
      for (const reply of replies.slice(0, 60)) expect(reply).toMatch(/^250 .*ignored \(forged/);
      // The bucket refills one a second while the flood runs: a few more may be taken, not many.
      const refused = replies.filter((r) => /^550 5\.1\.1 Return-path token not recognised/.test(r));
      expect(refused.length).toBeGreaterThanOrEqual(80);
      expect(refused.length + replies.filter((r) => /^250 .*ignored \(forged/.test(r)).length).toBe(150);
    }
    expect(taken.filter((t) => t.code === 'forged-token')).toHaveLength(300);
    // Logged once per window, not once per message.
    expect(logger.lines.filter((l) => l.includes('forged or edited return-path token'))).toHaveLength(1);

    // 3. 100,000 header lines (1.1 MB, under the size cap): refused with 552, never parsed.
    const headers = Buffer.from('X-Flood: 1\r\n'.repeat(100_000));
    const flood = await greeted(port, '127.0.0.9');
    const floodReply = await rawMessage(
      flood,
      `fbl@${DOMAIN}`,
      Buffer.concat([headers, Buffer.from('\r\nhi')]),
    );
    flood.close();
    expect(floodReply).toMatch(/^552 5\.3\.4 Message header too large/);
    expect(taken.filter((t) => t.code === 'header-too-large')).toHaveLength(1);
    expect(taken.filter((t) => t.code === 'unrecognised')).toHaveLength(0);

    // 4. A real DSN mailed to a return path of the broadcast, with the idle connections still held, from
    // an address that has used up its allowance of forged tokens: a real token is still taken from it.
    const returnPath = sink.state.returnPaths[0] as string;
    expect(returnPath).toMatch(/^b\+dlv_/);
    const relay = await greeted(port, '127.0.0.7');
    const applied = await rawMessage(relay, returnPath, dsn);
    relay.close();
    expect(applied).toMatch(/^250 .*applied/);
    expect(taken.filter((t) => t.outcome === 'applied')).toHaveLength(1);

    // The broadcast went on meanwhile, and completes: every message reached the sink.
    expect(sink.state.count).toBeGreaterThanOrEqual(sent);
    await vi.waitFor(() => expect(sink.state.count).toBe(RECIPIENTS), { timeout: 120_000, interval: 100 });
    await vi.waitFor(
      async () => {
        const view = await mailroom?.getMailing(secret, ref as string);
        expect(view?.counts).toMatchObject({ bounced: 1, sent: RECIPIENTS - 1 });
      },
      { timeout: 30_000, interval: 100 },
    );
  }, 240_000);
});
