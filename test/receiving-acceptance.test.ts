import { generateKeyPairSync } from 'node:crypto';
import { createMailroomClient } from '@mailroom/client';
import { createMailroom, type InboundMail, type Mailroom } from '@mailroom/core';
import { type MemoryTransport, memoryStore, memoryTransport } from '@mailroom/memory';
import { type InboundServer, inboundSmtpServer } from '@mailroom/smtp';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DnsZoneServer, startDnsZone } from './support/dns-zone.js';
import { type Listening, listenMailroom } from './support/http-harness.js';
import { rawSmtpClient } from './support/smtp-client.js';
import { waitUntil } from './support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * Issue 40 end to end on loopback: nodemailer sends to an inbound listener that serves the bounce domain
 * and three receiving routes (a webhook, the in-process handler, store only); SPF, DKIM and DMARC are
 * judged against a loopback DNS server.
 */

const INBOX = 'in.acme.test';
const ARCHIVE = 'archive.acme.test';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
const DKIM_PUBLIC = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
const DKIM_PRIVATE = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

describe('receiving mail for the app (routes, parse, authentication, limits)', () => {
  let zone: DnsZoneServer;
  let receiver: WebhookReceiver;
  let mailroom: Mailroom;
  let server: InboundServer;
  let secret: string;
  let transport: MemoryTransport;
  let api: Listening;
  const handled: InboundMail[] = [];

  const send = (message: SendMailOptions, dkim = false, port = server.port) =>
    nodemailer
      .createTransport({
        host: '127.0.0.1',
        port,
        secure: false,
        ignoreTLS: true,
        name: 'mx.sender.test',
        ...(dkim
          ? { dkim: { domainName: 'sender.test', keySelector: 'sel', privateKey: DKIM_PRIVATE } }
          : {}),
      })
      .sendMail(message);

  beforeAll(async () => {
    zone = await startDnsZone({
      'sender.test': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] },
      'sel._domainkey.sender.test': { TXT: [`v=DKIM1; k=rsa; p=${DKIM_PUBLIC}`] },
      '_dmarc.sender.test': { TXT: ['v=DMARC1; p=reject'] },
      'bank.test': { TXT: ['v=spf1 ip4:192.0.2.1 -all'] },
      '_dmarc.bank.test': { TXT: ['v=DMARC1; p=reject'] },
    });
    receiver = await startWebhookReceiver();
    transport = memoryTransport();
    mailroom = createMailroom({
      store: memoryStore(),
      transport,
      bounces: { domain: 'bounces.acme.test' },
      fetch: { allowHosts: [receiver.host] },
      webhooks: { retryScheduleMs: [20, 20, 20, 20, 20], circuitOpenMs: 20 },
      receiving: {
        onInbound: (mail) => {
          handled.push(mail);
        },
        resolver: zone.resolver(),
        spamVerdict: (mail) => ({ spam: /viagra/i.test(mail.subject ?? ''), score: 1 }),
        baseUrl: () => api.url,
      },
    });
    api = await listenMailroom('fastify', mailroom);
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    const added = await mailroom.webhooks.add(secret, {
      url: receiver.url,
      events: ['email.received', 'email.replied'],
    });
    receiver.secret = added.secret;
    await mailroom.admin.addSender(created.project.id, { address: 'news@acme.test' });
    const endpointId = added.endpoint.id;
    await mailroom.receiving.addRoute(secret, {
      domain: INBOX,
      pattern: 'support',
      destination: { kind: 'webhook', endpointId },
    });
    await mailroom.receiving.addRoute(secret, {
      domain: INBOX,
      pattern: 'reply+*',
      destination: { kind: 'handler' },
    });
    await mailroom.receiving.addRoute(secret, {
      domain: ARCHIVE,
      pattern: '*',
      destination: { kind: 'store' },
    });
    server = await inboundSmtpServer({
      inbound: mailroom.inbound,
      receiving: mailroom.receiving,
      host: '127.0.0.1',
      port: 0,
      maxBytes: 25 * 1024 * 1024,
    });
  });

  afterAll(async () => {
    await server?.close();
    await api?.close();
    await mailroom?.close();
    await receiver?.close();
    await zone?.close();
  });

  it('refuses a second route for a taken address and a webhook endpoint of nobody', async () => {
    await expect(
      mailroom.receiving.addRoute(secret, {
        domain: INBOX,
        pattern: 'support',
        destination: { kind: 'store' },
      }),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(
      mailroom.receiving.addRoute(secret, {
        domain: INBOX,
        pattern: 'sales',
        destination: { kind: 'webhook', endpointId: 'wh_nobody' },
      }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await mailroom.receiving.listRoutes(secret)).map((r) => `${r.pattern}@${r.domain}`)).toEqual([
      `*@${ARCHIVE}`,
      `reply+*@${INBOX}`,
      `support@${INBOX}`,
    ]);
  });

  it('posts a signed email.received with the parsed fields and a passing SPF, DKIM and DMARC', async () => {
    const info = await send(
      {
        from: 'Ana Lopez <ana@sender.test>',
        to: `support@${INBOX}`,
        cc: 'Bo <bo@example.org>',
        replyTo: 'help@sender.test',
        envelope: { from: 'ana@sender.test', to: [`support@${INBOX}`] },
        subject: 'Order 42 ç',
        text: 'My order did not arrive.',
        html: '<p>My order did not arrive.</p><img src="cid:logo@sender.test">',
        attachments: [
          { filename: 'invoice.pdf', content: Buffer.from('%PDF-1.4 fake'), contentType: 'application/pdf' },
          {
            filename: 'logo.png',
            content: Buffer.alloc(64, 7),
            contentType: 'image/png',
            cid: 'logo@sender.test',
          },
        ],
      },
      true,
    );
    expect(info.response).toMatch(/^250 Ok: received inm_/);
    await mailroom.webhooks.drain();
    await receiver.waitFor((r) => r.some((x) => x.payload.type === 'email.received'));
    const hook = receiver.received.find((x) => x.payload.type === 'email.received');
    expect(hook?.verified).toBe(true);
    const mail = hook?.payload.data.inbound as InboundMail;
    expect(mail).toMatchObject({
      from: { address: 'ana@sender.test', name: 'Ana Lopez' },
      to: [{ address: `support@${INBOX}`, name: '' }],
      cc: [{ address: 'bo@example.org', name: 'Bo' }],
      reply_to: [{ address: 'help@sender.test', name: '' }],
      subject: 'Order 42 ç',
      text: 'My order did not arrive.',
      envelope: { from: 'ana@sender.test', to: [`support@${INBOX}`], remote_address: '127.0.0.1' },
      auth: { spf: 'pass', dkim: 'pass', dmarc: 'pass' },
      spam: { spam: false, score: 1 },
    });
    expect(mail.html).toContain('My order did not arrive.');
    expect(mail.date).toMatch(/^\d{4}-\d\d-\d\dT/);
    // mailparser lists the inline (related) part before the mixed one.
    const byName = [...mail.attachments].sort((a, b) => String(a.filename).localeCompare(String(b.filename)));
    expect(byName).toMatchObject([
      { filename: 'invoice.pdf', content_type: 'application/pdf', size: 13, content_id: null },
      { filename: 'logo.png', content_type: 'image/png', size: 64, content_id: 'logo@sender.test' },
    ]);
    // The URLs download the bytes sent, without a key.
    const bytes = async (url: string | null) => Buffer.from(await (await fetch(String(url))).arrayBuffer());
    expect((await bytes(byName[0]?.url ?? null)).toString()).toBe('%PDF-1.4 fake');
    expect((await bytes(byName[1]?.url ?? null)).equals(Buffer.alloc(64, 7))).toBe(true);
    expect(mail.headers.some(([name]) => name === 'subject')).toBe(true);
    expect(mail.headers.some(([name]) => name === 'dkim-signature')).toBe(true);
    expect(await mailroom.receiving.getMessage(secret, mail.id)).toEqual(mail);
    expect(handled.some((h) => h.id === mail.id)).toBe(false);
  });

  it('hands a reply+ address to onInbound with the same shape and the stripped reply', async () => {
    await send({
      from: 'ana@sender.test',
      to: `reply+c_123@${INBOX}`,
      subject: 'Re: your comment',
      text: 'Agreed, ship it.\n\nOn Tue, Nov 24, 2026 at 10:00 AM Acme <news@acme.test> wrote:\n> Should we ship?\n> Thanks\n',
    });
    await waitUntil(() => handled.length === 1);
    const [mail] = handled;
    expect(mail).toMatchObject({
      to: [{ address: `reply+c_123@${INBOX}` }],
      stripped_text: 'Agreed, ship it.',
      auth: { spf: 'pass', dkim: 'none', dmarc: 'pass' },
    });
    expect(mail?.text).toContain('> Should we ship?');
    expect(Object.keys(mail ?? {}).sort()).toEqual(
      Object.keys(await mailroom.receiving.getMessage(secret, mail?.id ?? '')).sort(),
    );
  });

  it('refuses an address no route takes with 550 5.1.1 at RCPT, and keeps the bounce domain', async () => {
    const refused = await send({ from: 'ana@sender.test', to: `nobody@${INBOX}`, text: 'hi' }).catch(
      (error: { responseCode?: number; response?: string; command?: string }) => error,
    );
    expect(refused).toMatchObject({ responseCode: 550, command: 'RCPT TO' });
    expect((refused as { response: string }).response).toMatch(/5\.1\.1/);
    const other = await send({ from: 'ana@sender.test', to: 'someone@elsewhere.test', text: 'hi' }).catch(
      (error: { responseCode?: number }) => error,
    );
    expect(other).toMatchObject({ responseCode: 550 });
    const bounce = await send({
      from: 'mailer-daemon@example.org',
      to: 'x@bounces.acme.test',
      text: 'hello',
    });
    expect(bounce.response).toMatch(/^250 Ok: ignored/);
  });

  it('stores a catch-all message only, and delivers a forged From with dmarc: fail', async () => {
    await send({
      from: 'CEO <ceo@bank.test>',
      to: `anything@${ARCHIVE}`,
      envelope: { from: 'ceo@bank.test', to: [`anything@${ARCHIVE}`] },
      subject: 'Wire the money',
      text: 'Now.',
    });
    const { items } = await mailroom.receiving.listMessages(secret, { limit: 10 });
    const forged = items.find((m) => m.subject === 'Wire the money');
    expect(forged).toMatchObject({
      route_id: expect.stringMatching(/^rte_/),
      auth: { spf: 'fail', dmarc: 'fail' },
    });
    expect(forged?.auth.header).toContain('dmarc=fail');
    expect(handled.some((m) => m.id === forged?.id)).toBe(false);
  });

  it('links a reply to a delivered broadcast message and emits email.replied with the stripped text', async () => {
    const replied: Array<{ deliveryId: string; messageId: string }> = [];
    mailroom.on('emailReplied', (e) => replied.push(e));
    const sent = await mailroom.broadcast(secret, {
      subject: 'News',
      sender: 'news@acme.test',
      message: '<p>Our news</p>',
      recipients: [{ address: 'ana@sender.test' }, { address: 'bo@sender.test' }],
    });
    await mailroom.worker.drain();
    const original = transport.lastMessageTo('ana@sender.test');
    const originalId = String(original?.messageId);
    expect(originalId).toMatch(/^<.+@.+>$/);
    await send({
      from: 'ana@sender.test',
      to: `reply+news@${INBOX}`,
      subject: 'Re: News',
      inReplyTo: originalId,
      references: ['<older@elsewhere.test>', originalId],
      text: `Love it!\n\nOn Sun, Nov 29, 2026 at 9:00 AM Acme <news@acme.test> wrote:\n> Our news\n`,
    });
    await waitUntil(() => replied.length === 1);
    const mail = handled.find((m) => m.subject === 'Re: News');
    expect(mail?.stripped_text).toBe('Love it!');
    expect(mail?.replied_to).toMatchObject({
      message_id: originalId,
      address: 'ana@sender.test',
      mailing: { ref: sent.ref, kind: 'broadcast' },
    });
    expect(replied[0]).toMatchObject({ messageId: mail?.id, deliveryId: mail?.replied_to?.delivery_id });
    await mailroom.webhooks.drain();
    await receiver.waitFor((r) => r.some((x) => x.payload.type === 'email.replied'));
    const hook = receiver.received.find((x) => x.payload.type === 'email.replied');
    expect(hook?.verified).toBe(true);
    expect(hook?.payload.data).toMatchObject({
      mailing: { ref: sent.ref, kind: 'broadcast' },
      delivery: { id: mail?.replied_to?.delivery_id, message_id: originalId, address: 'ana@sender.test' },
      inbound: { id: mail?.id, stripped_text: 'Love it!' },
    });
  });

  it('caps recipients per message (452 past 20) and refuses 1 MiB of headers with 552', async () => {
    const many = Array.from({ length: 1000 }, (_, i) => `bulk${i}@${ARCHIVE}`);
    const info = await send({ from: 'ana@sender.test', to: many, subject: 'Many', text: 'hi' });
    expect(info.accepted).toHaveLength(20);
    expect(info.rejected).toHaveLength(980);
    const stored = await mailroom.receiving.listMessages(secret, { limit: 100 });
    expect(stored.items.find((m) => m.subject === 'Many')?.envelope.to).toHaveLength(20);
    const headers = await send({
      from: 'ana@sender.test',
      to: `anything@${ARCHIVE}`,
      headers: Object.fromEntries(
        Array.from({ length: 1024 }, (_, i) => [`X-Filler-${i}`, 'x'.repeat(1000)]),
      ),
      text: 'hi',
    }).catch((error: { responseCode?: number }) => error);
    expect(headers).toMatchObject({ responseCode: 552 });
  });

  it('times out a client that stalls mid-DATA while others are served', async () => {
    const strict = await inboundSmtpServer({
      inbound: mailroom.inbound,
      receiving: mailroom.receiving,
      host: '127.0.0.1',
      port: 0,
      socketTimeoutMs: 400,
    });
    try {
      const client = await rawSmtpClient(strict.port);
      await client.command('EHLO stall.test\r\n');
      await client.command('MAIL FROM:<ana@sender.test>\r\n');
      await client.command(`RCPT TO:<stall@${ARCHIVE}>\r\n`);
      expect(await client.command('DATA\r\n')).toMatch(/^354/);
      const stalled = client.command('Subject: stalled\r\n\r\nhalf a messa');
      const served = await send(
        { from: 'ana@sender.test', to: `other@${ARCHIVE}`, subject: 'Meanwhile', text: 'hi' },
        false,
        strict.port,
      );
      expect(served.response).toMatch(/^250/);
      expect(await stalled).toMatch(/^421/);
      client.close();
      const { items } = await mailroom.receiving.listMessages(secret, { limit: 100 });
      expect(items.some((m) => m.subject === 'stalled')).toBe(false);
    } finally {
      await strict.close();
    }
  });

  it('retries a received message to an endpoint that is down, and delivers it once when it is back', async () => {
    const before = receiver.received.length;
    // Down for the first three attempts, then back.
    receiver.respond = ({ count }) => (count - before < 3 ? 503 : 204);
    const info = await send({
      from: 'ana@sender.test',
      to: `support@${INBOX}`,
      subject: 'While down',
      text: 'hi',
    });
    const id = /received (inm_\w+)/.exec(info.response)?.[1];
    mailroom.worker.start();
    try {
      await receiver.waitFor((r) =>
        r.some((x) => x.status === 204 && (x.payload.data.inbound as InboundMail | undefined)?.id === id),
      );
    } finally {
      await mailroom.worker.stop();
      receiver.respond = () => 204;
    }
    const attempts = receiver.received
      .slice(before)
      .filter((x) => (x.payload.data.inbound as InboundMail | undefined)?.id === id);
    expect(attempts.map((x) => x.status)).toEqual([503, 503, 503, 204]);
    // Every retry carried the same webhook-id: the app drops a duplicate by it.
    expect(new Set(attempts.map((x) => x.id)).size).toBe(1);
    expect(attempts.every((x) => x.verified)).toBe(true);
  });

  it('refuses a 30 MB message with 552', async () => {
    const big = await send({
      from: 'ana@sender.test',
      to: `anything@${ARCHIVE}`,
      text: 'x',
      // 22 MiB in base64: about 30 MB on the wire.
      attachments: [{ filename: 'big.bin', content: Buffer.alloc(22 * 1024 * 1024, 1) }],
    }).catch((error: { responseCode?: number }) => error);
    expect(big).toMatchObject({ responseCode: 552 });
  });

  it('manages routes and reads received messages through the HTTP API and the typed client', async () => {
    const http = await listenMailroom('express', mailroom);
    try {
      const client = createMailroomClient({ url: http.url, key: secret });
      const { routes } = await client.receiving.listRoutes();
      expect(routes.map((r) => r.pattern).sort()).toEqual(['*', 'reply+*', 'support']);
      const { route } = await client.receiving.addRoute({
        domain: 'Sales.Acme.test',
        pattern: 'sales',
        destination: { kind: 'store' },
      });
      expect(route).toMatchObject({ domain: 'sales.acme.test', pattern: 'sales' });
      await expect(
        client.receiving.addRoute({
          domain: 'sales.acme.test',
          pattern: 'sales',
          destination: { kind: 'store' },
        }),
      ).rejects.toMatchObject({ status: 409 });
      await client.receiving.removeRoute(route.id);
      await expect(client.receiving.removeRoute(route.id)).rejects.toMatchObject({ status: 404 });
      const first = await client.receiving.listMessages({ limit: 2 });
      expect(first.messages).toHaveLength(2);
      expect(first.nextCursor).toBe(first.messages[1]?.id);
      const next = await client.receiving.listMessages({ before: first.nextCursor ?? '', limit: 100 });
      expect(next.messages.every((m) => m.id < (first.messages[1]?.id ?? ''))).toBe(true);
      const { message } = await client.receiving.getMessage(first.messages[0]?.id ?? '');
      expect(message).toEqual(await mailroom.receiving.getMessage(secret, message.id));
    } finally {
      await http.close();
    }
  });
});
