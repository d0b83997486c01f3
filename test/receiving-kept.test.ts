import { randomBytes } from 'node:crypto';
import {
  createMailroom,
  type InboundMail,
  type Mailroom,
  type ManualClock,
  manualClock,
} from '@mailroom/core';
import { type MemoryTransport, memoryStore, memoryTransport } from '@mailroom/memory';
import { type InboundServer, inboundSmtpServer } from '@mailroom/smtp';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DnsZoneServer, startDnsZone } from './support/dns-zone.js';
import { type Listening, listenMailroom } from './support/http-harness.js';
import { selfSignedCertificate } from './support/test-cert.js';
import { waitUntil } from './support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * Issue 40, second half, end to end on loopback: attachments kept with the message and served through
 * signed, expiring URLs; a project's size cap (552); retention swept by the worker on a controlled clock;
 * erasure of a contact removing their mail; per-delivery reply addresses linking a reply without
 * In-Reply-To. The engine's clock is a manual one: expiry and retention are moved by hand.
 */

const INBOX = 'in.acme.test';
const START = new Date('2031-03-01T00:00:00.000Z');
const DAY = 86_400_000;

describe('received mail kept: attachments, size caps, retention, erasure, reply addresses', () => {
  let zone: DnsZoneServer;
  let receiver: WebhookReceiver;
  let mailroom: Mailroom;
  let server: InboundServer;
  let http: Listening;
  let secret: string;
  let transport: MemoryTransport;
  let clock: ManualClock;
  const handled: InboundMail[] = [];

  const send = (message: SendMailOptions) =>
    nodemailer
      .createTransport({ host: '127.0.0.1', port: server.port, secure: false, ignoreTLS: true })
      .sendMail(message);
  const download = (url: string) =>
    fetch(url).then(async (r) => ({ status: r.status, r, bytes: Buffer.from(await r.arrayBuffer()) }));
  const stored = async () => (await mailroom.receiving.listMessages(secret, { limit: 100 })).items;

  beforeAll(async () => {
    // No records: SPF and DMARC answer none, and no lookup leaves loopback.
    zone = await startDnsZone({});
    receiver = await startWebhookReceiver();
    transport = memoryTransport();
    clock = manualClock(START);
    mailroom = createMailroom({
      store: memoryStore(),
      transport,
      clock,
      fetch: { allowHosts: [receiver.host] },
      worker: { pollMs: 10 },
      retention: { sweepEveryMs: 20 },
      webhooks: { retryScheduleMs: [20, 20, 20], circuitOpenMs: 20 },
      receiving: {
        onInbound: (mail) => {
          handled.push(mail);
        },
        resolver: zone.resolver(),
        baseUrl: () => http.url,
      },
    });
    http = await listenMailroom('fastify', mailroom);
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    await mailroom.admin.addSender(created.project.id, { address: 'news@acme.test' });
    const added = await mailroom.webhooks.add(secret, {
      url: receiver.url,
      events: ['email.received', 'email.replied'],
    });
    receiver.secret = added.secret;
    await mailroom.receiving.addRoute(secret, {
      domain: INBOX,
      pattern: 'support',
      destination: { kind: 'webhook', endpointId: added.endpoint.id },
    });
    await mailroom.receiving.addRoute(secret, {
      domain: INBOX,
      pattern: 'reply+*',
      destination: { kind: 'handler' },
    });
    await mailroom.receiving.addRoute(secret, {
      domain: INBOX,
      pattern: 'docs',
      destination: { kind: 'store' },
    });
    // No maxBytes: the listener takes the engine's cap for routed mail (25 MiB).
    server = await inboundSmtpServer({
      inbound: mailroom.inbound,
      receiving: mailroom.receiving,
      host: '127.0.0.1',
      port: 0,
    });
  });

  afterAll(async () => {
    await server?.close();
    await http?.close();
    await mailroom?.close();
    await receiver?.close();
    await zone?.close();
  });

  it('hands the webhook and onInbound attachment URLs that download the same bytes, without a key; edited or expired: 404', async () => {
    const pdf = randomBytes(300_000);
    const note = Buffer.from('Käse und Brot\n', 'utf8');
    await send({
      from: 'Ana <ana@sender.test>',
      to: [`support@${INBOX}`, `reply+thread-7@${INBOX}`],
      subject: 'Documents',
      text: 'Two files attached.',
      attachments: [
        { filename: 'scan.pdf', content: pdf, contentType: 'application/pdf' },
        { filename: 'note.txt', content: note, contentType: 'text/plain; charset=utf-8' },
      ],
    });
    await mailroom.webhooks.drain();
    await receiver.waitFor((r) => r.some((x) => x.payload.type === 'email.received'));
    await waitUntil(() => handled.some((m) => m.subject === 'Documents'));
    const hook = receiver.received.find((x) => x.payload.type === 'email.received');
    // (Not `verified`: its timestamp is the manual clock's 2031, outside the receiver's tolerance.)
    const inbound = (hook?.payload.data as { inbound: InboundMail } | undefined)?.inbound;
    const viaHook = inbound?.attachments ?? [];
    const viaHandler = handled.find((m) => m.subject === 'Documents')?.attachments ?? [];
    expect(mailroom.receiving.maxMessageBytes).toBe(25 * 1024 * 1024);
    for (const attachments of [viaHook, viaHandler]) {
      expect(attachments.map((a) => [a.filename, a.size])).toEqual([
        ['scan.pdf', pdf.length],
        ['note.txt', note.length],
      ]);
      const [scan, text] = attachments;
      expect(scan?.url).toMatch(new RegExp(`^${http.url}/inbound/attachments/`));
      expect(scan?.url_expires_at).toBe(new Date(START.getTime() + 7 * DAY).toISOString());
      const got = await download(scan?.url ?? '');
      expect(got.status).toBe(200);
      expect(got.r.headers.get('content-type')).toBe('application/pdf');
      expect(got.bytes.equals(pdf)).toBe(true);
      expect((await download(text?.url ?? '')).bytes.equals(note)).toBe(true);
    }
    // Edited: another attachment index, another message id, a changed MAC, a later expiry.
    const url = viaHook[0]?.url ?? '';
    const token = url.slice(url.lastIndexOf('/') + 1);
    const [projectId, messageId, , expiry, mac] = token.split('.');
    const base = `${http.url}/inbound/attachments/`;
    const forged = [
      `${projectId}.${messageId}.1.${expiry}.${mac}`,
      `${projectId}.${handled.at(-1)?.id}.0.${expiry}.${mac}`,
      `${projectId}.${messageId}.0.${expiry}.${mac?.startsWith('A') ? 'B' : 'A'}${mac?.slice(1)}`,
      `${projectId}.${messageId}.0.${(Number.parseInt(expiry ?? '0', 36) + DAY).toString(36)}.${mac}`,
    ];
    for (const edited of forged) expect((await download(base + edited)).status).toBe(404);
    // Past the URL's expiry: 404; the API hands out fresh URLs that work.
    clock.advance(7 * DAY + 1);
    expect((await download(url)).status).toBe(404);
    const fresh = await mailroom.receiving.getMessage(secret, inbound?.id ?? '');
    expect((await download(fresh.attachments[0]?.url ?? '')).bytes.equals(pdf)).toBe(true);
  });

  it('refuses with 552 a message over the project’s own cap, storing nothing; settings shown and reset', async () => {
    const before = (await stored()).length;
    const settings = await mailroom.receiving.updateSettings(secret, { max_message_bytes: 100_000 });
    expect(settings).toMatchObject({
      max_message_bytes: 100_000,
      defaults: { retention_days: 30, max_message_bytes: 25 * 1024 * 1024 },
    });
    await expect(
      send({
        from: 'ana@sender.test',
        to: `docs@${INBOX}`,
        subject: 'Too big',
        text: 'x',
        attachments: [{ filename: 'big.bin', content: randomBytes(200_000) }],
      }),
    ).rejects.toMatchObject({ responseCode: 552 });
    expect((await stored()).length).toBe(before);
    await mailroom.receiving.updateSettings(secret, { max_message_bytes: null });
    await send({
      from: 'ana@sender.test',
      to: `docs@${INBOX}`,
      subject: 'Fits',
      text: 'x',
      attachments: [{ filename: 'big.bin', content: randomBytes(200_000) }],
    });
    expect((await stored()).length).toBe(before + 1);
    await expect(mailroom.receiving.updateSettings(secret, { max_message_bytes: 1 })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
  });

  it('deletes received mail and its attachments once the project’s retention has passed (the worker’s sweep)', async () => {
    await mailroom.receiving.updateSettings(secret, { retention_days: 2 });
    await send({
      from: 'ana@sender.test',
      to: `docs@${INBOX}`,
      subject: 'Keep 2 days',
      text: 'a',
      attachments: [{ filename: 'a.txt', content: 'aaa' }],
    });
    await mailroom.receiving.updateSettings(secret, { retention_days: 5 });
    await send({ from: 'ana@sender.test', to: `docs@${INBOX}`, subject: 'Keep 5 days', text: 'b' });
    const bySubject = async (subject: string) => (await stored()).find((m) => m.subject === subject);
    const short = await bySubject('Keep 2 days');
    expect(short).toBeDefined();
    const link = short?.attachments[0]?.url ?? '';
    expect((await download(link)).status).toBe(200);
    mailroom.worker.start();
    try {
      clock.advance(3 * DAY);
      await waitUntil(async () => (await bySubject('Keep 2 days')) === undefined);
      // The same sweep left the 5-day one (and the 30-day ones) alone.
      expect(await bySubject('Keep 5 days')).toBeDefined();
      expect((await download(link)).status).toBe(404);
      clock.advance(3 * DAY);
      await waitUntil(async () => (await bySubject('Keep 5 days')) === undefined);
      expect((await stored()).length).toBeGreaterThan(0);
    } finally {
      await mailroom.worker.stop();
    }
    await mailroom.receiving.updateSettings(secret, { retention_days: null });
  });

  it('erasing a contact removes the mail they sent, with its attachments, and nobody else’s', async () => {
    await send({
      from: 'Zoe <Zoe@Sender.test>',
      to: `docs@${INBOX}`,
      subject: 'From Zoe',
      text: 'z',
      attachments: [{ filename: 'z.txt', content: 'zzz' }],
    });
    await send({ from: 'Yan <yan@sender.test>', to: `docs@${INBOX}`, subject: 'From Yan', text: 'y' });
    const zoe = (await stored()).find((m) => m.subject === 'From Zoe');
    const link = zoe?.attachments[0]?.url ?? '';
    expect((await download(link)).status).toBe(200);
    const erased = await mailroom.audience.eraseProfile(secret, 'zoe@sender.test');
    expect(erased.receivedMessages).toBe(1);
    const left = (await stored()).map((m) => m.subject);
    expect(left).not.toContain('From Zoe');
    expect(left).toContain('From Yan');
    expect((await download(link)).status).toBe(404);
    await expect(mailroom.receiving.getMessage(secret, zoe?.id ?? '')).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('sets reply+<delivery>@ as Reply-To when the project turns it on, and links a reply to it without In-Reply-To', async () => {
    await expect(
      mailroom.receiving.updateSettings(secret, { reply_domain: 'nowhere.acme.test' }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
    const on = await mailroom.receiving.updateSettings(secret, { reply_domain: INBOX });
    expect(on.reply_domain).toBe(INBOX);
    const replied: Array<{ deliveryId: string; messageId: string }> = [];
    mailroom.on('emailReplied', (e) => replied.push(e));
    const sent = await mailroom.send(secret, {
      subject: 'Your ticket',
      sender: 'news@acme.test',
      message: '<p>We are on it</p>',
      recipients: [{ address: 'carla@sender.test' }],
    });
    const own = await mailroom.send(secret, {
      subject: 'Own Reply-To',
      sender: 'news@acme.test',
      replyAddress: 'help@acme.test',
      message: '<p>x</p>',
      recipients: [{ address: 'dan@sender.test' }],
    });
    await mailroom.worker.drain();
    const outgoing = transport.lastMessageTo('carla@sender.test');
    const replyTo = String(outgoing?.replyTo);
    expect(replyTo).toMatch(new RegExp(`^reply\\+dlv_[a-z0-9]+@${INBOX.replace(/\./g, '\\.')}$`));
    expect(transport.lastMessageTo('dan@sender.test')?.replyTo).toBe('help@acme.test');
    expect(own.ref).toBeDefined();
    // Through the SMTP listener, to the Reply-To only: no In-Reply-To, no References.
    await send({
      from: 'carla@sender.test',
      to: replyTo,
      subject: 'Re: Your ticket',
      text: 'Thanks, that fixed it.\n\nOn Sun, Mar 1, 2031 at 9:00 AM Acme <news@acme.test> wrote:\n> We are on it\n',
    });
    await waitUntil(() => replied.length === 1);
    const mail = handled.find((m) => m.subject === 'Re: Your ticket');
    expect(mail?.in_reply_to).toBeNull();
    expect(mail?.stripped_text).toBe('Thanks, that fixed it.');
    expect(mail?.replied_to).toMatchObject({
      delivery_id: replyTo.slice('reply+'.length, replyTo.indexOf('@')),
      address: 'carla@sender.test',
      mailing: { ref: sent.ref, kind: 'message' },
      matched_by: 'reply_address',
    });
    await mailroom.webhooks.drain();
    await receiver.waitFor((r) => r.some((x) => x.payload.type === 'email.replied'));
    // A reply+ address naming no delivery of the project is taken by the route, linked to nothing.
    await send({
      from: 'carla@sender.test',
      to: `reply+dlv_000000000forged00000000@${INBOX}`,
      subject: 'Forged',
      text: 'f',
    });
    await waitUntil(() => handled.some((m) => m.subject === 'Forged'));
    expect(handled.find((m) => m.subject === 'Forged')?.replied_to).toBeNull();
    expect(replied).toHaveLength(1);
  });

  it('takes routed mail over STARTTLS with a configured certificate, and applies the per-IP message rate to it', async () => {
    const { key, cert } = selfSignedCertificate('mx.acme.test');
    const tlsServer = await inboundSmtpServer({
      inbound: mailroom.inbound,
      receiving: mailroom.receiving,
      host: '127.0.0.1',
      port: 0,
      tls: { key, cert },
      maxMessagesPerMinute: 2,
    });
    try {
      const over = (subject: string) =>
        nodemailer
          .createTransport({
            host: '127.0.0.1',
            port: tlsServer.port,
            secure: false,
            requireTLS: true,
            tls: { ca: cert, servername: 'mx.acme.test' },
          })
          .sendMail({ from: 'ana@sender.test', to: `docs@${INBOX}`, subject, text: 'over TLS' });
      expect((await over('TLS 1')).response).toMatch(/^250 Ok: received inm_/);
      await over('TLS 2');
      await expect(over('TLS 3')).rejects.toMatchObject({ responseCode: 451 });
      const subjects = (await stored()).map((m) => m.subject);
      expect(subjects).toEqual(expect.arrayContaining(['TLS 1', 'TLS 2']));
      expect(subjects).not.toContain('TLS 3');
    } finally {
      await tlsServer.close();
    }
  });
});
