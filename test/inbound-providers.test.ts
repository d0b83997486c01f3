import { createHmac, createSign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMailroom, type Mailroom, SNS_CERTIFICATE_URL, snsStringToSign } from '@mailroom/core';
import { mailroomPlugin } from '@mailroom/http/fastify';
import { type MemoryTransport, memoryStore, memoryTransport } from '@mailroom/memory';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from './support/test-cert.js';

/**
 * Provider notifications over real HTTP on 127.0.0.1: SES through SNS (signatures checked against a
 * certificate served by a loopback stand-in for sns.<region>.amazonaws.com, injected through the allowed
 * certificate URL and the guarded fetcher's allow-list; Amazon is never contacted) and Mailgun webhooks.
 */

const SENDER = 'news@acme.test';
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:ses-feedback';
const MAILGUN_KEY = 'key-0123456789abcdef0123456789abcdef';

describe('provider notifications', () => {
  const { key, cert } = selfSignedCertificate('sns.eu-west-1.amazonaws.com');
  const other = selfSignedCertificate('someone-else');
  let snsHost: Server;
  let snsBase = '';
  const hits: string[] = [];
  let app: FastifyInstance;
  let base = '';
  let mailroom: Mailroom;
  let transport: MemoryTransport;
  let secret = '';

  beforeAll(async () => {
    snsHost = createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/SimpleNotificationService-test.pem') return res.end(cert);
      if (req.url?.startsWith('/confirm')) return res.end('<ConfirmSubscriptionResponse/>');
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((resolve) => snsHost.listen(0, '127.0.0.1', resolve));
    const snsPort = (snsHost.address() as AddressInfo).port;
    snsBase = `http://127.0.0.1:${snsPort}`;
    transport = memoryTransport();
    mailroom = createMailroom({
      store: memoryStore(),
      transport,
      fetch: {
        allowHosts: [`127.0.0.1:${snsPort}`],
        connectHook: (t) => {
          if (t.address !== '127.0.0.1') throw new Error(`test: no traffic to ${t.address}`);
        },
      },
      notifications: {
        ses: {
          topicArns: [TOPIC],
          certificateUrl: new RegExp(`^${snsBase}/[A-Za-z-]+\\.pem$`),
          subscribeUrl: new RegExp(`^${snsBase}/confirm`),
        },
        mailgun: { signingKey: MAILGUN_KEY },
      },
    });
    const created = await mailroom.admin.createProject({ name: 'Acme' });
    secret = created.secret;
    await mailroom.admin.addSender(created.project.id, { address: SENDER });
    app = Fastify();
    await app.register(mailroomPlugin, { mailroom });
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await mailroom?.close();
    await new Promise<void>((resolve) => snsHost?.close(() => resolve()));
  });

  async function sent(to: string) {
    const { ref } = await mailroom.send(secret, {
      subject: 'Hi',
      sender: SENDER,
      message: 'x',
      recipients: to,
    });
    await mailroom.worker.drain();
    return { ref, messageId: transport.lastMessageTo(to)?.messageId ?? '' };
  }

  function snsMessage(fields: Record<string, string>, signWith = key) {
    const message = {
      MessageId: `m-${Math.random()}`,
      TopicArn: TOPIC,
      Timestamp: new Date().toISOString(),
      SignatureVersion: '2',
      SigningCertURL: `${snsBase}/SimpleNotificationService-test.pem`,
      ...fields,
    } as Record<string, string>;
    const signer = createSign('RSA-SHA256');
    signer.update(snsStringToSign(message as never));
    message.Signature = signer.sign(signWith, 'base64');
    return message;
  }

  function sesNotification(type: 'Bounce' | 'Complaint', messageId: string, address: string) {
    const payload =
      type === 'Bounce'
        ? {
            notificationType: 'Bounce',
            bounce: {
              bounceType: 'Permanent',
              bouncedRecipients: [
                { emailAddress: address, status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' },
              ],
            },
            mail: { commonHeaders: { messageId } },
          }
        : {
            notificationType: 'Complaint',
            complaint: { complainedRecipients: [{ emailAddress: address }], complaintFeedbackType: 'abuse' },
            mail: { commonHeaders: { messageId } },
          };
    return snsMessage({ Type: 'Notification', Message: JSON.stringify(payload) });
  }

  const post = (path: string, body: unknown, contentType = 'text/plain; charset=UTF-8') =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body: JSON.stringify(body),
    });

  it('the default certificate URL admits only Amazon SNS hosts over https', () => {
    expect(
      SNS_CERTIFICATE_URL.test('https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem'),
    ).toBe(true);
    expect(
      SNS_CERTIFICATE_URL.test('http://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem'),
    ).toBe(false);
    expect(SNS_CERTIFICATE_URL.test('https://sns.us-east-1.amazonaws.com.evil.test/x.pem')).toBe(false);
    expect(SNS_CERTIFICATE_URL.test('https://evil.test/sns.us-east-1.amazonaws.com/x.pem')).toBe(false);
  });

  it('a signed SES bounce marks the delivery bounced; a complaint marks it complained', async () => {
    const a = await sent('ann@example.org');
    const res = await post('/inbound/ses', sesNotification('Bounce', a.messageId, 'ann@example.org'));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ outcome: 'applied' });
    expect((await mailroom.getDelivery(secret, a.ref, 'ann@example.org')).status).toBe('bounced');
    const b = await sent('bob@example.org');
    expect(
      (await post('/inbound/ses', sesNotification('Complaint', b.messageId, 'bob@example.org'))).status,
    ).toBe(200);
    expect((await mailroom.getDelivery(secret, b.ref, 'bob@example.org')).status).toBe('complained');
    expect(hits.filter((h) => h.endsWith('.pem'))).toHaveLength(1);
  });

  it('unsigned, wrongly signed, foreign-certificate and wrong-topic SES posts are 401 and change nothing', async () => {
    const c = await sent('carol@example.org');
    const good = sesNotification('Bounce', c.messageId, 'carol@example.org');
    const bad = [
      { ...good, Signature: undefined },
      { ...good, Message: good.Message?.replace('Permanent', 'Transient') },
      sesNotificationSignedBy(other.key),
      { ...good, SigningCertURL: 'https://evil.test/SimpleNotificationService-test.pem' },
      snsMessage({
        Type: 'Notification',
        Message: good.Message as string,
        TopicArn: 'arn:aws:sns:eu-west-1:1:other',
      }),
      'not json at all',
    ];
    for (const body of bad) {
      const res = await fetch(`${base}/inbound/ses`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      expect(res.status).toBe(401);
    }
    expect((await mailroom.getDelivery(secret, c.ref, 'carol@example.org')).status).toBe('sent');
    function sesNotificationSignedBy(signer: string) {
      const m = snsMessage({ Type: 'Notification', Message: good.Message as string }, signer);
      return m;
    }
  });

  it('confirms an SNS subscription through the guarded fetcher', async () => {
    const res = await post(
      '/inbound/ses',
      snsMessage({
        Type: 'SubscriptionConfirmation',
        Message: 'confirm',
        Token: 'tok',
        SubscribeURL: `${snsBase}/confirm?Token=tok`,
      }),
    );
    expect(res.status).toBe(200);
    expect(hits).toContain('/confirm?Token=tok');
    // A SubscribeURL elsewhere is refused, and not fetched.
    const elsewhere = await post(
      '/inbound/ses',
      snsMessage({
        Type: 'SubscriptionConfirmation',
        Message: 'confirm',
        Token: 'tok',
        SubscribeURL: 'https://evil.test/confirm',
      }),
    );
    expect(elsewhere.status).toBe(401);
  });

  function mailgunBody(
    event: Record<string, unknown>,
    signingKey = MAILGUN_KEY,
    timestamp = String(Math.floor(Date.now() / 1000)),
  ) {
    const token = `t${Math.random().toString(36).slice(2)}`;
    const signature = createHmac('sha256', signingKey)
      .update(timestamp + token)
      .digest('hex');
    return { signature: { timestamp, token, signature }, 'event-data': event };
  }

  it('a signed Mailgun permanent failure bounces; bad or stale signatures are 401', async () => {
    const d = await sent('dan@example.org');
    const event = {
      event: 'failed',
      severity: 'permanent',
      recipient: 'dan@example.org',
      message: { headers: { 'message-id': d.messageId.slice(1, -1) } },
      'delivery-status': { code: 550, message: '5.1.1 The email account does not exist' },
    };
    for (const body of [
      mailgunBody(event, 'key-wrong'),
      mailgunBody(event, MAILGUN_KEY, String(Math.floor(Date.now() / 1000) - 3600)),
      { 'event-data': event },
    ]) {
      expect((await post('/inbound/mailgun', body, 'application/json')).status).toBe(401);
    }
    expect((await mailroom.getDelivery(secret, d.ref, 'dan@example.org')).status).toBe('sent');
    const ok = await post('/inbound/mailgun', mailgunBody(event), 'application/json');
    expect(ok.status).toBe(200);
    const delivery = await mailroom.getDelivery(secret, d.ref, 'dan@example.org');
    expect(delivery.status).toBe('bounced');
    expect(delivery.lastError).toContain('5.1.1');
  });

  it('a Mailgun complaint marks complained', async () => {
    const e = await sent('eve@example.org');
    const body = mailgunBody({
      event: 'complained',
      recipient: 'eve@example.org',
      message: { headers: { 'message-id': e.messageId } },
    });
    expect((await post('/inbound/mailgun', body, 'application/json')).status).toBe(200);
    expect((await mailroom.getDelivery(secret, e.ref, 'eve@example.org')).status).toBe('complained');
  });
});
