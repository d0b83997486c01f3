import { createMailroom, type InboundMessageEvent, type Logger, type Mailroom } from '@mailroom/core';
import { memoryStore, memoryTransport } from '@mailroom/memory';
import {
  type InboundServer,
  type InboundServerOptions,
  inboundSmtpServer,
  smtpTransport,
} from '@mailroom/smtp';
import { afterEach, describe, expect, it } from 'vitest';
import { inboundFixture } from '../packages/core/test/inbound-fixtures.js';
import { rawSmtpClient } from './support/smtp-client.js';
import { selfSignedCertificate } from './support/test-cert.js';

/** The inbound SMTP listener on 127.0.0.1: what it refuses, its caps, STARTTLS, and that it keeps serving. */

const DOMAIN = 'bounces.acme.test';
const SENDER = 'news@acme.test';

function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (_obj: object, msg?: string) => lines.push(`${level}: ${msg ?? ''}`);
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** Sends `raw` to the listener as an MTA would (nodemailer's client, through the SMTP transport). */
async function mailTo(port: number, to: string, raw: string | Buffer, tls?: { cert: string }) {
  const client = smtpTransport({
    host: '127.0.0.1',
    port,
    ...(tls ? { requireTLS: true, tls: { ca: tls.cert, servername: DOMAIN } } : { ignoreTLS: true }),
  });
  try {
    return await client.send({
      messageId: '<x@test>',
      envelope: { from: '', to: [to] },
      raw: Buffer.from(raw),
    });
  } finally {
    await client.close();
  }
}

describe('inbound SMTP listener', () => {
  let mailroom: Mailroom;
  let server: InboundServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await mailroom?.close();
  });

  async function start(extra: Partial<InboundServerOptions> = {}) {
    const transport = memoryTransport();
    const logger = memoryLogger();
    mailroom = createMailroom({ store: memoryStore(), transport, logger, bounces: { domain: DOMAIN } });
    const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: SENDER });
    const taken: InboundMessageEvent[] = [];
    mailroom.on('inbound:message', (e) => taken.push(e));
    server = await inboundSmtpServer({
      inbound: mailroom.inbound,
      host: '127.0.0.1',
      port: 0,
      logger,
      ...extra,
    });
    return { transport, secret, logger, port: server.port, taken };
  }

  it('applies a DSN mailed to a return path; refuses RCPT outside the bounce domain', async () => {
    const { transport, secret, logger, port } = await start();
    const { ref } = await mailroom.send(secret, {
      subject: 'Hi',
      sender: SENDER,
      message: 'x',
      recipients: 'ann@example.org',
    });
    await mailroom.worker.drain();
    const sent = transport.lastMessageTo('ann@example.org');
    const returnPath = sent?.envelopeFrom as string;
    const raw = inboundFixture('dsn-postfix-hard', {
      returnPath,
      recipient: 'ann@example.org',
      messageId: sent?.messageId ?? '',
    });
    expect((await mailTo(port, returnPath, raw)).response).toMatch(/^250 .*applied/);
    expect((await mailroom.getDelivery(secret, ref, 'ann@example.org')).status).toBe('bounced');

    await expect(mailTo(port, 'someone@example.org', 'Subject: x\r\n\r\nrelay me\r\n')).rejects.toMatchObject(
      {
        responseCode: 550,
        command: 'RCPT TO',
      },
    );
    expect(logger.lines).toContain('warn: inbound SMTP: recipient outside the bounce domain refused');
  });

  it('refuses a 50 MB message, logs and counts it, and keeps serving', async () => {
    const { logger, port, taken } = await start();
    const raw = Buffer.concat([Buffer.from('Subject: big\r\n\r\n'), Buffer.alloc(50 * 1024 * 1024, 'a')]);
    // Declared with SIZE (nodemailer does): refused at MAIL FROM.
    await expect(mailTo(port, `b+x@${DOMAIN}`, raw)).rejects.toMatchObject({ responseCode: 552 });
    // A client that declares nothing: refused after the data.
    const c = await rawSmtpClient(port);
    expect(await c.command('EHLO test.example')).toMatch(/^250/);
    expect(await c.command('MAIL FROM:<>')).toMatch(/^250/);
    expect(await c.command(`RCPT TO:<b+x@${DOMAIN}>`)).toMatch(/^250/);
    expect(await c.command('DATA')).toMatch(/^354/);
    const line = `${'a'.repeat(998)}\r\n`;
    const chunk = Buffer.from(line.repeat(1024));
    let reply: Promise<string> | undefined;
    for (let sent = 0; sent < 50 * 1024 * 1024; sent += chunk.length) reply = c.command(chunk);
    reply = c.command('.');
    expect(await reply).toMatch(/^552/);
    c.close();
    expect(logger.lines).toContain('warn: inbound message over the size cap refused');
    expect(taken).toEqual([
      { via: 'smtp', report: 'unrecognised', outcome: 'ignored', code: 'too-large' },
      { via: 'smtp', report: 'unrecognised', outcome: 'ignored', code: 'too-large' },
    ]);
    expect((await mailTo(port, `b+x@${DOMAIN}`, 'Subject: hi\r\n\r\nhello\r\n')).response).toMatch(
      /^250 .*ignored/,
    );
  });

  it('takes a malformed MIME tree (ignored, logged, counted) and keeps serving', async () => {
    const { logger, port, taken } = await start();
    const broken =
      'Content-Type: multipart/report; report-type=delivery-status; boundary="x"\r\n\r\n--x\r\nContent-Type: message/delivery-status\r\n\r\n\u0001junk\r\n--y--\r\n';
    // Not a return path (a feedback address, say): parsed, so the broken tree is what is ignored.
    expect((await mailTo(port, `fbl@${DOMAIN}`, broken)).response).toMatch(/ignored/);
    expect(logger.lines).toContain('warn: inbound message ignored');
    expect(taken[0]).toMatchObject({ outcome: 'ignored', code: 'unrecognised' });
    expect((await mailTo(port, `b+x@${DOMAIN}`, 'Subject: hi\r\n\r\nhello\r\n')).response).toMatch(/^250/);
  });

  it('offers no AUTH; offers STARTTLS only with a key and certificate', async () => {
    const { port } = await start();
    const plain = await rawSmtpClient(port);
    const plainEhlo = await plain.command('EHLO test.example');
    plain.close();
    expect(plainEhlo).not.toContain('AUTH');
    expect(plainEhlo).not.toContain('STARTTLS');
    const { key, cert } = selfSignedCertificate(DOMAIN);
    const tlsServer = await inboundSmtpServer({
      inbound: mailroom.inbound,
      host: '127.0.0.1',
      port: 0,
      tls: { key, cert },
    });
    try {
      const c = await rawSmtpClient(tlsServer.port);
      const ehlo = await c.command('EHLO test.example');
      c.close();
      expect(ehlo).toContain('STARTTLS');
      expect(ehlo).not.toContain('AUTH');
      expect(
        (await mailTo(tlsServer.port, `b+x@${DOMAIN}`, 'Subject: tls\r\n\r\nhi\r\n', { cert })).response,
      ).toMatch(/^250/);
    } finally {
      await tlsServer.close();
    }
  });

  it('limits messages per minute and connections per address, and counts what it defers', async () => {
    const { port, taken } = await start({ maxMessagesPerMinute: 2, maxConnectionsPerIp: 1 });
    const send = () => mailTo(port, `b+x@${DOMAIN}`, 'Subject: r\r\n\r\nx\r\n');
    await send();
    await send();
    await expect(send()).rejects.toMatchObject({ responseCode: 451 });
    // b+x is no token of this engine: drained unparsed after its MAC fails, counted as forged.
    expect(taken.map((t) => `${t.outcome}:${t.code}`)).toEqual([
      'ignored:forged-token',
      'ignored:forged-token',
      'deferred:rate-limited',
    ]);
    const held = await rawSmtpClient(port);
    expect(held.greeting).toMatch(/^220/);
    // Refused connections close too; their close must not free a place that was never taken.
    for (let i = 0; i < 3; i++) {
      const refused = await rawSmtpClient(port);
      expect(refused.greeting).toMatch(/^421/);
      refused.close();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const still = await rawSmtpClient(port);
    expect(still.greeting).toMatch(/^421/);
    still.close();
    held.close();
  });

  it('exempts trusted relays from the per-IP limits; refuses a bad network', async () => {
    const { port } = await start({
      maxMessagesPerMinute: 1,
      maxConnectionsPerIp: 1,
      trustedRelays: ['10.0.0.0/8', '127.0.0.0/8'],
    });
    const send = () => mailTo(port, `b+x@${DOMAIN}`, 'Subject: r\r\n\r\nx\r\n');
    for (let i = 0; i < 5; i++) expect((await send()).response).toMatch(/^250/);
    const held = await rawSmtpClient(port);
    const second = await rawSmtpClient(port);
    expect(held.greeting).toMatch(/^220/);
    expect(second.greeting).toMatch(/^220/);
    held.close();
    second.close();
    for (const bad of ['10.0.0.0/33', 'example.org', '10.0.0.0/', '::1/129']) {
      await expect(
        inboundSmtpServer({ inbound: mailroom.inbound, host: '127.0.0.1', port: 0, trustedRelays: [bad] }),
      ).rejects.toThrow(/CIDR/);
    }
  });
});
