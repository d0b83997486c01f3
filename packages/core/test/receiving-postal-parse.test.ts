import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { simpleParser } from 'mailparser';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import PostalMime from 'postal-mime';
import { describe, expect, it } from 'vitest';
import type { MailFields } from '../src/receiving/mail-fields.js';
import { mailparserFields, readFields } from '../src/receiving/parse-received.js';
import { postalFields } from '../src/receiving/postal-parse.js';

/**
 * The fast read (postal-mime) must give what mailparser gives on every message it takes: each message of
 * the bounce corpus, the inbound fixtures and the everyday mail of `fixtures/everyday` (Gmail, Outlook, Apple
 * Mail and Thunderbird shapes, inline images, QP and base64 bodies, non-UTF-8 charsets), with its own line
 * ends and with CRLF (as SMTP delivers it), and messages nodemailer composes.
 */

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

function files(dir: string): Array<{ name: string; bytes: Buffer }> {
  return readdirSync(`${fixtures}${dir}`)
    .filter((f) => f.endsWith('.eml'))
    .sort()
    .map((f) => ({ name: `${dir}/${f}`, bytes: readFileSync(`${fixtures}${dir}/${f}`) }));
}

/** The inbound fixtures' placeholders, filled as `inbound-fixtures.ts` fills them. */
function filled(bytes: Buffer): Buffer {
  return Buffer.from(
    bytes
      .toString('latin1')
      .replaceAll('{{RETURN_PATH}}', 'bounces+abc@bounces.acme.test')
      .replaceAll('{{RECIPIENT}}', 'kim@example.net')
      .replaceAll('{{MESSAGE_ID}}', '<m1@acme.test>'),
    'latin1',
  );
}

const paragraph = 'Hello, I have a question about my order and the invoice attached to this message. ';

/** Messages as nodemailer writes them (the bench's sender among them), each shape of its encoder. */
async function composed(): Promise<Array<{ name: string; bytes: Buffer }>> {
  const png = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
    'base64',
  );
  const options: Record<string, ConstructorParameters<typeof MailComposer>[0]> = {
    'bench 20 KB': {
      from: 'Ana Lopez <ana@sender.bench.test>',
      to: 'support@in.bench.test',
      subject: 'A question about order 4217',
      text: paragraph.repeat(90),
      html: `<p>${paragraph.repeat(60)}</p>`,
      attachments: [{ filename: 'invoice.txt', content: 'x'.repeat(3_000) }],
    },
    'text only, ASCII': { from: 'a@x.test', to: 'b@y.test', subject: 'Hi', text: 'Hello\nsecond line\n' },
    'text and HTML, UTF-8 (QP)': {
      from: '"Zoë Ü" <zoe@x.test>',
      to: ['b@y.test', 'Çelik <c@y.test>'],
      cc: 'd@y.test',
      replyTo: 'r@x.test',
      subject: 'Größe — ☕',
      text: 'Grüße aus Köln ☕\n\nZoë',
      html: '<p>Grüße aus Köln ☕</p>',
      inReplyTo: '<prev@y.test>',
      references: ['<first@y.test>', '<prev@y.test>'],
    },
    'mostly non-Latin (base64 body)': {
      from: 'a@x.test',
      to: 'b@y.test',
      subject: 'こんにちは',
      text: 'こんにちは、注文について質問があります。'.repeat(20),
      html: '<p>こんにちは</p>',
    },
    'inline image (related)': {
      from: 'a@x.test',
      to: 'b@y.test',
      subject: 'Logo',
      text: 'See the logo',
      html: '<img src="cid:logo@x.test">',
      attachments: [{ filename: 'logo.png', content: png, cid: 'logo@x.test' }],
    },
    'attachments: pdf, non-ASCII name, text in base64': {
      from: 'a@x.test',
      to: 'b@y.test',
      subject: 'Files',
      text: 'Two files.',
      attachments: [
        {
          filename: 'Rechnung März.pdf',
          content: Buffer.from('%PDF-1.4\n%âãÏÓ\n'),
          contentType: 'application/pdf',
        },
        { filename: 'notes.txt', content: 'line one\r\nline two\r\n', encoding: 'utf8' },
      ],
    },
  };
  const out: Array<{ name: string; bytes: Buffer }> = [];
  for (const [name, mail] of Object.entries(options)) {
    out.push({ name: `composed: ${name}`, bytes: await new MailComposer(mail).compile().build() });
  }
  return out;
}

async function everyMessage(): Promise<Array<{ name: string; bytes: Buffer }>> {
  const all = [
    ...files('bounce-corpus/messages'),
    ...files('inbound').map((m) => ({ ...m, bytes: filled(m.bytes) })),
    ...files('everyday'),
  ];
  const withCrlf = all.map((m) => ({
    name: `${m.name} (CRLF)`,
    bytes: Buffer.from(m.bytes.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1'),
  }));
  return [...all, ...withCrlf, ...(await composed())];
}

/**
 * The fields to compare: mailparser stamps a message without a valid Date with the time of the parse, so two
 * parses of it differ there (such a message goes to mailparser: see the last test).
 */
function comparable(fields: MailFields): MailFields {
  const date = fields.headers.find(([key]) => key === 'date')?.[1];
  const stamped = date === undefined || Number.isNaN(new Date(date).getTime());
  return stamped ? { ...fields, date: 'stamped' } : fields;
}

/** postal-mime's attachments' bytes, in its order. */
async function postalAttachmentBytes(bytes: Buffer): Promise<Buffer[]> {
  const email = await PostalMime.parse(bytes, { attachmentEncoding: 'arraybuffer' });
  return email.attachments.map((a) =>
    Buffer.from(
      typeof a.content === 'string' ? Buffer.from(a.content) : new Uint8Array(a.content as ArrayBuffer),
    ),
  );
}

describe('postalFields: the fast read of received mail', () => {
  it('gives what mailparser gives on every message it takes, attachments byte for byte', async () => {
    const messages = await everyMessage();
    const taken: string[] = [];
    for (const { name, bytes } of messages) {
      const fast = await postalFields(bytes);
      const slow = await mailparserFields(bytes);
      // The path the receiver takes gives mailparser's fields, whichever parser it chose.
      expect(comparable(await readFields(bytes)), name).toEqual(comparable(slow));
      if (!fast) continue;
      taken.push(name);
      expect(fast, name).toEqual(slow);
      const mail = await simpleParser(bytes, {
        skipImageLinks: true,
        skipTextLinks: true,
        skipTextToHtml: true,
      });
      const postalBytes = await postalAttachmentBytes(bytes);
      expect(postalBytes.length, name).toBe(mail.attachments.length);
      mail.attachments.forEach((a, i) => {
        expect(postalBytes[i]?.equals(a.content), `${name}: attachment ${i}`).toBe(true);
      });
    }
    // The everyday shapes go the fast way (the bench's message among them) ...
    for (const name of [
      'composed: bench 20 KB',
      'composed: text only, ASCII',
      'composed: text and HTML, UTF-8 (QP)',
      'composed: mostly non-Latin (base64 body)',
      'composed: inline image (related)',
      'everyday/gmail-reply.eml (CRLF)',
      'everyday/outlook-reply.eml (CRLF)',
      'everyday/apple-mail-attachment.eml (CRLF)',
      'everyday/inline-image-related.eml (CRLF)',
      'everyday/bench-20kb-composer.eml',
    ]) {
      expect(taken, name).toContain(name);
    }
    // ... and a good share of the corpus too (288 of 1,282 when this was written).
    expect(taken.length).toBeGreaterThan(250);
  }, 120_000);

  it('leaves to mailparser every shape where postal-mime reads differently', async () => {
    const messages = await everyMessage();
    let differing = 0;
    const routed = new Set<string>();
    for (const { name, bytes } of messages) {
      const slow = await mailparserFields(bytes);
      const any = await postalFields(bytes, { anyShape: true });
      if (any && JSON.stringify(any) === JSON.stringify(slow)) continue;
      differing++;
      expect(await postalFields(bytes), name).toBeUndefined();
      routed.add(name);
    }
    // The shape check is needed: without it postal-mime would differ on these (attached messages, reports,
    // non-UTF-8 charsets, flowed text, HTML-only mail, bare CRs, 8-bit headers, lines that end in spaces).
    expect(differing).toBeGreaterThan(500);
    for (const name of [
      'everyday/forward-rfc822.eml (CRLF)',
      'everyday/html-only.eml (CRLF)',
      'everyday/latin1-qp.eml (CRLF)',
      'everyday/windows-1252-alt.eml (CRLF)',
      'everyday/utf8-headers-8bit.eml (CRLF)',
      'everyday/apple-mail-html-mixed.eml (CRLF)',
    ]) {
      expect(routed, name).toContain(name);
    }
  }, 120_000);

  it('leaves to mailparser a message postal-mime refuses (nested deeper than its limit)', async () => {
    let body = 'Hello\r\n';
    for (let i = 300; i > 0; i--)
      body = `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n${body}--b${i}--\r\n`;
    const raw = Buffer.from(
      `From: a@x.test\r\nDate: Mon, 30 Nov 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\n${body}`,
    );
    await expect(postalFields(raw)).rejects.toThrow(/nesting depth/);
    expect(await readFields(raw)).toEqual(await mailparserFields(raw));
  });

  it('leaves to mailparser the shapes whose differences the corpus does not show', async () => {
    for (const name of [
      'calendar-invite',
      'octet-stream-named',
      'text-attachment-7bit',
      'thunderbird-flowed',
      'iso-2022-jp',
      'koi8r-base64',
    ]) {
      const bytes = readFileSync(`${fixtures}everyday/${name}.eml`);
      expect(await postalFields(bytes), name).toBeUndefined();
    }
    const head =
      'From: a@x.test\r\nDate: Mon, 30 Nov 2026 10:00:00 +0000\r\nContent-Type: text/plain\r\n\r\n';
    // No Date (mailparser stamps the parse time), no final line break, an encoded line break before a soft one.
    expect(await postalFields(Buffer.from('From: a@x.test\r\n\r\nHello\r\n'))).toBeUndefined();
    expect(await postalFields(Buffer.from(`${head}Hello`))).toBeUndefined();
    expect(
      await postalFields(
        Buffer.from(
          `${head.replace('text/plain', 'text/plain\r\nContent-Transfer-Encoding: quoted-printable')}a=0A=\r\n`,
        ),
      ),
    ).toBeUndefined();
    expect(await postalFields(Buffer.from(`${head}Hello\r\n`))).toBeDefined();
  });
});
