import { composeFor } from '@mailroom/core';
import { type SmtpTransport, smtpTransport } from '@mailroom/smtp';
import nodemailer from 'nodemailer';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from '../../../test/support/smtp-sink.js';
import { INVITATION, makeMessage } from './fixtures.js';

let sink: SmtpSink;
let transport: SmtpTransport;

beforeAll(async () => {
  sink = await startSmtpSink();
  transport = smtpTransport({ host: sink.host, port: sink.port });
});
afterAll(async () => {
  await transport.close();
  await sink.close();
});
afterEach(() => sink.clear());

/** Sends and returns what the sink got (the sink parses before its 250). */
async function roundTrip(message = makeMessage(), via = transport) {
  const receipt = await via.send(composeFor(via, message));
  const got = sink.messages.find((m) => m.parsed.messageId === message.messageId);
  if (!got) throw new Error(`message ${message.messageId} not in the sink`);
  const head = got.raw.subarray(0, got.raw.indexOf('\r\n\r\n')).toString('latin1');
  return { receipt, got, head, unfolded: head.replace(/\r\n[ \t]+/g, ' ') };
}

describe('smtpTransport: the message on the wire', () => {
  it('keeps the Message-ID exactly, sets the envelope to the one recipient and answers with the receipt', async () => {
    const message = makeMessage({
      messageId: '<0194f3a2-7c1e-7b3d-9e8f-1a2b3c4d5e6f.delivery-42@mail.example.com>',
      from: { address: 'news@example.com', name: 'News' },
      to: { address: 'Reader@Example.org', name: 'Reader' },
    });
    const { receipt, got, head, unfolded } = await roundTrip(message);
    expect(got.parsed.messageId).toBe(message.messageId);
    expect(unfolded).toMatch(
      /^Message-ID: <0194f3a2-7c1e-7b3d-9e8f-1a2b3c4d5e6f\.delivery-42@mail\.example\.com>$/m,
    );
    // nodemailer normalizes the (case-insensitive) domain; the local part is kept as given.
    expect(got.envelope).toEqual({ mailFrom: 'news@example.com', rcptTo: ['Reader@example.org'] });
    expect(receipt).toEqual({
      messageId: message.messageId,
      accepted: ['Reader@example.org'],
      rejected: [],
      response: expect.stringMatching(/^250 .*queued as SINK1/),
    });
    expect(head).toMatch(/^Date: /m);
    expect(head).toMatch(/^MIME-Version: 1\.0$/m);
  });

  it('encodes non-ASCII display names and subjects, and quotes specials in names', async () => {
    const message = makeMessage({
      from: { address: 'zoe@example.com', name: 'Zoë "the boss" Ångström, Ltd.' },
      to: { address: 'taro@example.org', name: '山田 太郎' },
      subject: 'Grüße — 🎉 100 % €',
    });
    const { got, head } = await roundTrip(message);
    expect(got.parsed.from?.value).toEqual([
      { address: 'zoe@example.com', name: 'Zoë "the boss" Ångström, Ltd.' },
    ]);
    expect(got.parsed.to).toMatchObject({ value: [{ address: 'taro@example.org', name: '山田 太郎' }] });
    expect(got.parsed.subject).toBe('Grüße — 🎉 100 % €');
    // Only ASCII in the header block: every non-ASCII word is MIME-encoded.
    expect(head).toMatch(/^[\x20-\x7e\r\n\t]*$/);
  });

  it('sends text and HTML as multipart/alternative, both decoded intact', async () => {
    const html = `<html><body><p>Bonjour à tous ${'— une ligne très longue '.repeat(300)}</p></body></html>`;
    const message = makeMessage({ text: 'Bonjour à tous\nLigne 2', html });
    const { got, head } = await roundTrip(message);
    expect(head).toMatch(/^Content-Type: multipart\/alternative;/m);
    expect(got.parsed.text?.trimEnd()).toBe('Bonjour à tous\nLigne 2');
    expect((got.parsed.html || '').trimEnd()).toBe(html);
  });

  it('uses base64 for long HTML by default and quoted-printable when asked', async () => {
    const html = `<p>${'Long line of HTML with é. '.repeat(400)}</p>`;
    const { got } = await roundTrip(makeMessage({ html }));
    expect(got.raw.toString('latin1')).toMatch(
      /Content-Type: text\/html; charset=utf-8\r\nContent-Transfer-Encoding: base64/,
    );

    const qp = smtpTransport({
      host: sink.host,
      port: sink.port,
      textEncoding: 'quoted-printable',
      maxConnections: 1,
    });
    try {
      const { got: qpGot } = await roundTrip(makeMessage({ html }), qp);
      const raw = qpGot.raw.toString('latin1');
      expect(raw).toMatch(
        /Content-Type: text\/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable/,
      );
      expect((qpGot.parsed.html || '').trimEnd()).toBe(html);
    } finally {
      await qp.close();
    }
  });

  it('sets Reply-To', async () => {
    const { got } = await roundTrip(makeMessage({ replyTo: 'support@example.com' }));
    expect(got.parsed.replyTo?.value).toEqual([{ address: 'support@example.com', name: '' }]);
  });

  it('attaches files byte for byte, as base64, with their names and types', async () => {
    const bytes = Uint8Array.from({ length: 1024 }, (_, i) => (i * 7) % 256);
    const text = new TextEncoder().encode('a\nb\r\nc\rd \t\n\n.\n..\nend');
    const message = makeMessage({
      html: '<p>see attached</p>',
      attachments: [
        { filename: 'data.bin', contentType: 'application/octet-stream', content: bytes },
        { filename: 'Überblick 2026.txt', contentType: 'text/plain', content: text },
        { filename: 'empty.csv', contentType: 'text/csv', content: new Uint8Array(0) },
      ],
    });
    const { got, head } = await roundTrip(message);
    expect(head).toMatch(/^Content-Type: multipart\/mixed;/m);
    const files = got.parsed.attachments.map((a) => ({
      filename: a.filename,
      contentType: a.contentType,
      bytes: Array.from(a.content),
    }));
    expect(files).toEqual([
      { filename: 'data.bin', contentType: 'application/octet-stream', bytes: Array.from(bytes) },
      { filename: 'Überblick 2026.txt', contentType: 'text/plain', bytes: Array.from(text) },
      { filename: 'empty.csv', contentType: 'text/csv', bytes: [] },
    ]);
    const raw = got.raw.toString('latin1');
    expect(raw.match(/Content-Disposition: attachment/g)).toHaveLength(3);
    expect(raw).not.toMatch(
      /Content-Transfer-Encoding: (7bit|quoted-printable)\r\nContent-Disposition: attachment/,
    );
  });

  it('adds the calendar part as text/calendar with method REQUEST', async () => {
    const message = makeMessage({
      html: '<p>You are invited</p>',
      calendar: { method: 'REQUEST', content: INVITATION, filename: 'invite.ics' },
    });
    const { got } = await roundTrip(message);
    const raw = got.raw.toString('latin1');
    expect(raw).toMatch(/Content-Type: text\/calendar; charset=utf-8; method=REQUEST/);
    const calendar = got.parsed.attachments.find((a) => /^text\/calendar/.test(a.contentType));
    expect(calendar?.content.toString('utf8')).toBe(INVITATION);
    expect(
      got.parsed.attachments.some((a) => a.contentType === 'application/ics' && a.filename === 'invite.ics'),
    ).toBe(true);
    expect(got.parsed.text?.trimEnd()).toBe(message.text);
  });

  it('adds the List-Unsubscribe pair and other extra headers verbatim', async () => {
    const url = `https://mail.example.com/u/${'x'.repeat(150)}?t=abc&l=1`;
    const message = makeMessage({
      headers: {
        'List-Unsubscribe': `<${url}>, <mailto:unsubscribe@example.com?subject=unsubscribe>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        'X-Campaign': 'spring-2026',
      },
    });
    const { head, unfolded } = await roundTrip(message);
    expect(unfolded).toMatch(
      new RegExp(
        `^List-Unsubscribe: <${url.replace(/[.?&]/g, '\\$&')}>, <mailto:unsubscribe@example\\.com\\?subject=unsubscribe>$`,
        'm',
      ),
    );
    expect(head).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
    expect(head).toMatch(/^X-Campaign: spring-2026$/m);
    expect(head.split('\r\n').every((line) => line.length <= 998)).toBe(true);
  });

  it('never lets a header value add a header line', async () => {
    const message = makeMessage({
      subject: 'Hi\r\nBcc: victim@example.net',
      headers: { 'X-Note': 'a\r\nBcc: victim@example.net' },
    });
    const { got, head } = await roundTrip(message);
    expect(head).not.toMatch(/^Bcc:/im);
    expect(got.envelope.rcptTo).toEqual(['recipient@example.org']);
  });
});

describe('smtpTransport: configuration', () => {
  it('declares dkim and the pool size (8 connections by default: the worker concurrency) as its concurrency', () => {
    expect(transport.name).toBe('smtp');
    expect(transport.capabilities).toEqual({ dkim: true, maxConcurrency: 8, textEncoding: 'base64' });
    const small = smtpTransport({ host: '127.0.0.1', port: sink.port, maxConnections: 2 });
    expect(small.capabilities.maxConcurrency).toBe(2);
  });

  it('reuses pooled connections: 20 messages, at most maxConnections connections', async () => {
    const before = sink.connections;
    const pooled = smtpTransport({ host: sink.host, port: sink.port, maxConnections: 3 });
    try {
      await Promise.all(Array.from({ length: 20 }, () => pooled.send(composeFor(pooled, makeMessage()))));
    } finally {
      await pooled.close();
    }
    expect(sink.messages).toHaveLength(20);
    expect(sink.connections - before).toBeGreaterThanOrEqual(1);
    expect(sink.connections - before).toBeLessThanOrEqual(3);
  });

  it('accepts an smtp:// URL with percent-encoded credentials and authenticates with them', async () => {
    const authSink = await startSmtpSink({ auth: { user: 'mailer@example.com', pass: 'p@ss:w/rd é' } });
    const viaUrl = smtpTransport(`${authSink.url}?maxConnections=2`);
    try {
      expect(authSink.url).toContain('mailer%40example.com:p%40ss%3Aw%2Frd%20%C3%A9@127.0.0.1');
      expect(viaUrl.capabilities.maxConcurrency).toBe(2);
      await viaUrl.verify();
      await viaUrl.send(composeFor(viaUrl, makeMessage()));
      expect(authSink.messages).toHaveLength(1);
    } finally {
      await viaUrl.close();
      await authSink.close();
    }
  });

  it('rejects wrong credentials as transient, keeping the reply (the recipient is not at fault)', async () => {
    const authSink = await startSmtpSink({ auth: { user: 'u', pass: 'right' } });
    const wrong = smtpTransport({
      host: authSink.host,
      port: authSink.port,
      auth: { user: 'u', pass: 'wrong' },
    });
    try {
      const error = await wrong.send(composeFor(wrong, makeMessage())).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'MailroomError', code: 'TRANSPORT_TRANSIENT', responseCode: 535 });
      expect(authSink.messages).toHaveLength(0);
    } finally {
      await wrong.close();
      await authSink.close();
    }
  });

  it('refuses URLs of other schemes', () => {
    expect(() => smtpTransport('http://127.0.0.1:25')).toThrow(/unsupported URL scheme/);
  });

  it('sends through an injected nodemailer transporter, reading its pool size', async () => {
    const injected = nodemailer.createTransport({
      host: sink.host,
      port: sink.port,
      pool: true,
      maxConnections: 4,
    });
    const viaTransporter = smtpTransport(injected);
    try {
      expect(viaTransporter.capabilities.maxConcurrency).toBe(4);
      const message = makeMessage();
      const receipt = await viaTransporter.send(composeFor(viaTransporter, message));
      expect(receipt.accepted).toEqual(['recipient@example.org']);
      expect(sink.messages.map((m) => m.parsed.messageId)).toEqual([message.messageId]);
    } finally {
      await viaTransporter.close();
    }
  });

  it('verify() passes against a live server', async () => {
    await expect(transport.verify()).resolves.toBeUndefined();
  });
});
