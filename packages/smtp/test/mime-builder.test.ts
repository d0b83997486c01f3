import { composeFor, type OutgoingMessage } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import fc from 'fast-check';
import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import MimeNode from 'nodemailer/lib/mime-node';
import DataStream from 'nodemailer/lib/smtp-connection/data-stream';
import { describe, expect, it, vi } from 'vitest';
import { startSmtpSink } from '../../../test/support/smtp-sink.js';
import { createMimeBuilder, quotedPrintable, wireAddress } from '../../core/src/mime/mime-builder.js';
import { smtpData } from '../src/pool-sender.js';
import { makeMessage } from './fixtures.js';

const base64 = createMimeBuilder();
const qp = createMimeBuilder({ textEncoding: 'quoted-printable' });

function headOf(raw: Buffer): string {
  return raw.subarray(0, raw.indexOf('\r\n\r\n')).toString('latin1');
}

/** The transfer encoding of the first part whose Content-Type starts with `type`. */
function encodingOf(raw: Buffer, type: string): string | undefined {
  const text = raw.toString('latin1');
  const at = text.indexOf(`Content-Type: ${type}`);
  return at < 0 ? undefined : /Content-Transfer-Encoding: (\S+)/.exec(text.slice(at))?.[1];
}

/** The boundary of the first multipart of a message. */
function boundaryOf(raw: Buffer): string {
  const match = /boundary="([^"]+)"/.exec(raw.toString('latin1'));
  if (!match?.[1]) throw new Error('no boundary');
  return match[1];
}

function expectWellFormed(raw: Buffer): void {
  const text = raw.toString('latin1');
  // Every line break is CRLF, no line is longer than SMTP allows.
  expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
  for (const line of text.split('\r\n')) expect(line.length).toBeLessThanOrEqual(998);
  expect(text.endsWith('\r\n')).toBe(true);
}

describe('mime builder: headers', () => {
  it('folds a long non-ASCII subject into encoded words of at most 75 characters, lines of 78', async () => {
    const subject = `${'Grüße aus Köln — 🎉 Überraschung für dich, '.repeat(6)}終わり`;
    for (const builder of [base64, qp]) {
      const raw = builder.build(makeMessage({ subject }));
      const head = headOf(raw);
      const lines = head.split('\r\n');
      const start = lines.findIndex((l) => l.startsWith('Subject: '));
      let end = start + 1;
      while (lines[end]?.startsWith(' ')) end++;
      expect(end - start).toBeGreaterThan(3);
      for (const line of lines.slice(start, end)) {
        expect(line.length).toBeLessThanOrEqual(78);
        expect(line).toMatch(/^[\x20-\x7e]*$/);
        for (const word of line.match(/=\?[^?]+\?[BQ]\?[^?]*\?=/g) ?? [])
          expect(word.length).toBeLessThanOrEqual(75);
      }
      expect((await simpleParser(raw)).subject).toBe(subject);
    }
  });

  it('folds a long ASCII header at its spaces and keeps a value without spaces whole', async () => {
    const subject = `${'word '.repeat(60)}end`;
    const url = `<https://mail.example.com/u/${'x'.repeat(300)}>`;
    const raw = base64.build(makeMessage({ subject, headers: { 'List-Unsubscribe': url } }));
    const head = headOf(raw);
    const subjectLines = head.slice(head.indexOf('Subject: ')).split('\r\n');
    expect(subjectLines[0]?.length).toBeLessThanOrEqual(78);
    expect(subjectLines[1]).toMatch(/^ word/);
    expect(head.replace(/\r\n[ \t]/g, ' ')).toContain(`List-Unsubscribe: ${url}`);
    const parsed = await simpleParser(raw);
    expect(parsed.subject).toBe(subject);
    const line = parsed.headerLines.find((h) => h.key === 'list-unsubscribe')?.line ?? '';
    expect(line.replace(/\r\n[ \t]/g, ' ')).toBe(`List-Unsubscribe: ${url}`);
  });

  it('quotes display names with specials, encodes non-ASCII ones, and leaves atoms bare', async () => {
    const names = [
      'Doe, John "JD" \\ Jr.',
      "O'Brien (Sales) <sales>",
      'Zoë Ångström',
      'Looks =?utf-8?Q?encoded?= but is not',
      'Plain Name',
      'Très long nom avec des accents, '.repeat(5),
    ];
    for (const name of names) {
      const raw = base64.build(makeMessage({ from: { address: 'sender@example.com', name } }));
      const head = headOf(raw);
      expect(head).toMatch(/^[\x20-\x7e\r\n\t]*$/);
      const parsed = await simpleParser(raw);
      expect(parsed.from?.value).toEqual([{ address: 'sender@example.com', name }]);
    }
    expect(
      headOf(base64.build(makeMessage({ from: { address: 'a@example.com', name: 'Plain Name' } }))),
    ).toMatch(/^From: Plain Name <a@example\.com>$/m);
    expect(
      headOf(base64.build(makeMessage({ from: { address: 'a@example.com', name: 'Doe, John' } }))),
    ).toMatch(/^From: "Doe, John" <a@example\.com>$/m);
    expect(headOf(base64.build(makeMessage({ to: { address: 'b@example.com', name: '' } })))).toMatch(
      /^To: b@example\.com$/m,
    );
  });

  it('never lets a value or a name start a header line; refuses invalid and reserved header names', async () => {
    const raw = base64.build(
      makeMessage({
        subject: 'Hi\r\nBcc: victim@example.net',
        to: { address: 'to@example.org', name: 'Eve\r\nBcc: victim@example.net' },
        headers: { 'X-Note': 'a\nBcc: victim@example.net' },
      }),
    );
    expect(headOf(raw)).not.toMatch(/^Bcc:/im);
    expect((await simpleParser(raw)).subject).toBe('Hi\r\nBcc: victim@example.net');
    expect(() => base64.build(makeMessage({ headers: { 'X Bad': 'v' } }))).toThrow(
      expect.objectContaining({ code: 'TRANSPORT_PERMANENT' }),
    );
    expect(() => base64.build(makeMessage({ headers: { 'content-type': 'text/html' } }))).toThrow(
      expect.objectContaining({ code: 'TRANSPORT_PERMANENT' }),
    );
    expect(() => base64.build(makeMessage({ messageId: '<a@b>\r\nBcc: x@y' }))).toThrow(
      expect.objectContaining({ code: 'TRANSPORT_PERMANENT' }),
    );
  });

  it('normalizes addresses as nodemailer does: lower-case and punycode domains, quoted odd local parts', () => {
    const node = new MimeNode();
    const addresses = [
      'Reader@Example.ORG',
      'plain@example.com',
      'ünï@bücher.example',
      'safe@jõgeva.ee',
      'first.last+tag@sub.Domain.example',
      '"quoted local"@example.com',
      'user@[192.0.2.1]',
    ];
    for (const address of addresses) {
      const expected = node.setEnvelope({ from: address, to: [] }).getEnvelope().from;
      expect(wireAddress(address), address).toBe(expected);
    }
    // Not an address list: a local part that is no dot-atom is quoted, angle brackets are dropped.
    expect(wireAddress('odd local@example.com')).toBe('"odd local"@example.com');
    expect(wireAddress(' a<b>@Example.com\r\n')).toBe('"a b "@example.com');
  });
});

describe('mime builder: bodies', () => {
  it('sends short-lined ASCII as 7bit with CRLF line breaks, whatever breaks it was given', async () => {
    const text = 'line one\nline two\r\nline three\rline four\n\n.leading dot\n..two dots\nend';
    const raw = base64.build(makeMessage({ text }));
    expect(encodingOf(raw, 'text/plain')).toBe('7bit');
    expectWellFormed(raw);
    expect(raw.toString('latin1')).toContain(
      'line one\r\nline two\r\nline three\r\nline four\r\n\r\n.leading dot\r\n',
    );
    const parsed = await simpleParser(raw);
    expect(parsed.text?.trimEnd()).toBe(text.replace(/\r\n|\r/g, '\n'));
  });

  it('encodes a part with a line starting with "From " (mbox readers rewrite it) and decodes it intact', async () => {
    const text = 'Hello\nFrom here on, nothing changes\nbye';
    for (const builder of [base64, qp]) {
      const raw = builder.build(makeMessage({ text }));
      expect(encodingOf(raw, 'text/plain')).not.toBe('7bit');
      expect(raw.toString('latin1')).not.toMatch(/\r\nFrom /);
      expect((await simpleParser(raw)).text?.trimEnd()).toBe(text);
    }
  });

  it('quoted-printable: soft breaks at 76, trailing blanks and a leading dot encoded, round trip exact', async () => {
    const text = `${'Ligne très longue avec des accents et = signes. '.repeat(12)}  \n.dot line\t\nFrom me\nend `;
    const raw = qp.build(makeMessage({ text, html: `<p>${text}</p>` }));
    expect(encodingOf(raw, 'text/plain')).toBe('quoted-printable');
    expectWellFormed(raw);
    const body = raw.toString('latin1');
    for (const line of body.split('\r\n')) expect(line.length).toBeLessThanOrEqual(76);
    expect(body).toContain('=2Edot line=09\r\n');
    expect(body).toContain('=46rom me\r\n');
    const parsed = await simpleParser(raw);
    expect(parsed.text?.trimEnd()).toBe(text.replace(/ $/, '').trimEnd());
    expect((parsed.html || '').trimEnd()).toBe(`<p>${text}</p>`);
  });

  it('quoted-printable round-trips any text', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 400 }), async (text) => {
        const encoded = quotedPrintable(Buffer.from(text, 'utf8')).toString('latin1');
        for (const line of encoded.split('\r\n')) expect(line.length).toBeLessThanOrEqual(76);
        expect(encoded).not.toMatch(/[^\x20-\x7e\t\r\n]/);
        const decoded = Buffer.from(
          encoded
            .replace(/=\r\n/g, '')
            .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
          'latin1',
        );
        expect(decoded.toString('utf8')).toBe(text.replace(/\r\n|\r|\n/g, '\r\n'));
      }),
      { numRuns: 300 },
    );
  });

  it('cuts base64 into 76-character lines and decodes attachments byte for byte, at every length', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 400 }), async (bytes) => {
        const raw = base64.build(
          makeMessage({
            attachments: [{ filename: 'data.bin', contentType: 'application/octet-stream', content: bytes }],
          }),
        );
        expectWellFormed(raw);
        const text = raw.toString('latin1');
        const body = text.slice(text.indexOf('\r\n\r\n', text.indexOf('filename=data.bin')) + 4);
        const lines = body.slice(0, body.indexOf('\r\n--')).split('\r\n');
        for (const line of lines.slice(0, -1)) expect(line).toHaveLength(76);
        expect(Buffer.from(lines.join(''), 'base64').equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('never lets text that spells the boundary end a part: such a part is encoded instead', async () => {
    const probe = base64.build(makeMessage({ html: '<p>x</p>' }));
    const boundary = boundaryOf(probe);
    const text = `before\r\n--${boundary}\r\nContent-Type: text/html\r\n\r\n<p>forged</p>\r\n--${boundary}--\r\nafter`;
    const raw = base64.build(makeMessage({ text, html: '<p>real</p>' }));
    expect(boundaryOf(raw)).toBe(boundary);
    expect(encodingOf(raw, 'text/plain')).toBe('base64');
    const parsed = await simpleParser(raw);
    expect(parsed.text?.trimEnd()).toBe(text.replace(/\r\n/g, '\n'));
    expect(parsed.html).toBe('<p>real</p>');
  });

  it('sends message/* attachments unencoded, under a boundary that does not occur in them', async () => {
    const probe = base64.build(
      makeMessage({
        attachments: [{ filename: 'a.txt', contentType: 'text/plain', content: Buffer.from('a') }],
      }),
    );
    const usual = boundaryOf(probe);
    const inner = `Subject: forwarded\r\n\r\n--${usual}\r\nnot a boundary here\r\n`;
    const raw = base64.build(
      makeMessage({
        attachments: [{ filename: 'fwd.eml', contentType: 'message/rfc822', content: Buffer.from(inner) }],
      }),
    );
    expect(boundaryOf(raw)).not.toBe(usual);
    expect(encodingOf(raw, 'message/rfc822')).toBe('7bit');
    expectWellFormed(raw);
    const parsed = await simpleParser(raw);
    expect(parsed.attachments.map((a) => a.contentType)).toEqual(['message/rfc822']);
  });

  it('builds the attachments of a list once, and again when the list changes', async () => {
    const attachments = [{ filename: 'a.txt', contentType: 'text/plain', content: Buffer.from('first') }];
    const one = base64.build(makeMessage({ attachments }));
    const two = base64.build(makeMessage({ attachments }));
    const part = (raw: Buffer) =>
      raw.toString('latin1').slice(raw.toString('latin1').indexOf('filename=a.txt'));
    expect(part(two)).toBe(part(one));
    attachments.push({ filename: 'b.txt', contentType: 'text/plain', content: Buffer.from('second') });
    const three = await simpleParser(base64.build(makeMessage({ attachments })));
    expect(three.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([
      ['a.txt', 'first'],
      ['b.txt', 'second'],
    ]);
  });

  it('keeps the subject, text and HTML intact next to a calendar part, for any content', async () => {
    const unicode = fc.string({ unit: 'grapheme', maxLength: 200 });
    await fc.assert(
      fc.asyncProperty(unicode, unicode, unicode, fc.boolean(), async (subject, text, html, useQp) => {
        const message: OutgoingMessage = makeMessage({
          subject: subject.replace(/[\r\n]+/g, ' ').trim(),
          text,
          html,
          calendar: {
            method: 'REQUEST',
            content: 'BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n',
            filename: 'invite.ics',
          },
        });
        const raw = (useQp ? qp : base64).build(message);
        expectWellFormed(raw);
        const parsed = await simpleParser(raw);
        expect(parsed.subject ?? '').toBe(message.subject);
        const normalized = (s: string) => s.replace(/\r\n|\r/g, '\n').replace(/\n$/, '');
        expect(normalized(parsed.text ?? '')).toBe(normalized(text));
        if (html.trim() !== '') expect(normalized(parsed.html || '')).toBe(normalized(html));
      }),
      { numRuns: 150 },
    );
  });
});

describe('SMTP data (the lean send path)', () => {
  it("sends through the pool without nodemailer's per-byte data stream, leading dots intact", async () => {
    const transform = vi.spyOn(DataStream.prototype, '_transform');
    const sink = await startSmtpSink();
    const transport = smtpTransport({ host: sink.host, port: sink.port });
    const injected = smtpTransport(nodemailer.createTransport({ host: sink.host, port: sink.port }));
    try {
      const text = '.leading dot\n..two dots\n.\nend';
      await transport.send(composeFor(transport, makeMessage({ text })));
      expect(sink.messages[0]?.parsed.text?.trimEnd()).toBe(text);
      expect(transform).not.toHaveBeenCalled();
      // An injected transporter goes through sendMail and so through the data stream: the spy sees that.
      await injected.send(composeFor(injected, makeMessage({ text })));
      expect(sink.messages[1]?.parsed.text?.trimEnd()).toBe(text);
      expect(transform).toHaveBeenCalled();
    } finally {
      transform.mockRestore();
      await transport.close();
      await injected.close();
      await sink.close();
    }
  });

  it('passes CRLF bytes with no leading dot through untouched (the same Buffer)', () => {
    const raw = Buffer.from('Subject: x\r\n\r\nline\r\nline. with dot\r\n');
    expect(smtpData(raw)).toBe(raw);
  });

  it('doubles a dot that starts a line, and repairs bare CR and LF like nodemailer', () => {
    const cases: Array<[string, string]> = [
      ['.first\r\nx', '..first\r\nx'],
      ['a\r\n.b\r\n..c\r\n', 'a\r\n..b\r\n...c\r\n'],
      ['a\nb\n.c', 'a\r\nb\r\n..c'],
      ['a\r.b', 'a\r\n..b'],
      ['a\r', 'a\r\n'],
      ['.', '..'],
    ];
    for (const [input, output] of cases) {
      expect(smtpData(Buffer.from(input, 'latin1')).toString('latin1'), JSON.stringify(input)).toBe(output);
    }
  });
});
