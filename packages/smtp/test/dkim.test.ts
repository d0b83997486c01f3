import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeFor, type OutgoingMessage, outgoingComposer, type Transport } from '@mailroom/core';
import { DKIM_SIGNED_HEADERS, outboxTransport, type SmtpTransport, smtpTransport } from '@mailroom/smtp';
import { dkimVerify } from 'mailauth';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type SmtpSink, startSmtpSink } from '../../../test/support/smtp-sink.js';
import { INVITATION, makeMessage } from './fixtures.js';

// Counts key parsing in the transport: the spy wraps the real function.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, createPrivateKey: vi.fn(actual.createPrivateKey) };
});

const DOMAIN = 'example.com';

interface TestKey {
  selector: string;
  pem: string;
  /** The TXT record a domain would publish. */
  txt: string;
}

function rsaKey(selector: string): TestKey {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const spki = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  return { selector, pem: pem(privateKey), txt: `v=DKIM1; k=rsa; p=${spki}` };
}

function ed25519Key(selector: string): TestKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  // RFC 8463: the record holds the bare 32-byte public key.
  const raw = publicKey.export({ type: 'spki', format: 'der' }).subarray(-32).toString('base64');
  return { selector, pem: pem(privateKey), txt: `v=DKIM1; k=ed25519; p=${raw}` };
}

function pem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

const rsa = rsaKey('rsa2026');
const ed = ed25519Key('ed2026');
const keys = [rsa, ed];

/** A DNS resolver that knows only our test keys: nothing leaves the machine. */
async function resolver(name: string, type: string): Promise<string[][]> {
  const key = keys.find((k) => name === `${k.selector}._domainkey.${DOMAIN}`);
  if (type === 'TXT' && key) return [[key.txt]];
  throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
}

async function verify(raw: Buffer) {
  const result = await dkimVerify(raw, { resolver, curTime: new Date() });
  return result.results.map((r) => {
    const extra = r as typeof r & { algo?: string; signingHeaders?: { keys?: string } };
    return {
      result: r.status.result,
      domain: r.signingDomain,
      selector: r.selector,
      algo: extra.algo,
      info: r.info,
    };
  });
}

function signedHeaderNames(raw: Buffer): string[] {
  const head = raw
    .subarray(0, raw.indexOf('\r\n\r\n'))
    .toString('latin1')
    .replace(/\r\n[ \t]+/g, ' ');
  const field = head.split('\r\n').find((l) => /^DKIM-Signature:/i.test(l)) ?? '';
  const h = /\bh=([^;]+)/.exec(field)?.[1] ?? '';
  return h.split(':').map((n) => n.trim().toLowerCase());
}

function richMessage(key: TestKey, overrides: Partial<OutgoingMessage> = {}): OutgoingMessage {
  return makeMessage({
    from: { address: `news@${DOMAIN}`, name: 'Zoë from Mailroom' },
    to: { address: 'reader@example.org', name: '山田 太郎' },
    subject: 'Grüße — your monthly digest 🎉',
    text: 'Trailing spaces here   \n\ttabs\tinside\n\n\n',
    html: `<p>${'Newsletter body with ünïcödé. '.repeat(300)}</p>   \n\n`,
    replyTo: `support@${DOMAIN}`,
    attachments: [
      {
        filename: 'bytes.bin',
        contentType: 'application/octet-stream',
        content: Uint8Array.from({ length: 256 }, (_, i) => i),
      },
    ],
    calendar: { method: 'REQUEST', content: INVITATION, filename: 'invite.ics' },
    headers: {
      'List-Unsubscribe': `<https://${DOMAIN}/unsubscribe/${'t'.repeat(100)}>, <mailto:unsubscribe@${DOMAIN}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
    dkim: { selector: key.selector, privateKey: key.pem, domain: DOMAIN },
    ...overrides,
  });
}

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
beforeEach(() => {
  sink.clear();
});

/** Composes as the engine does, then sends: a composition failure rejects like a failed send. */
async function sendVia(transport: Transport, message: OutgoingMessage) {
  return transport.send(composeFor(transport, message));
}

describe('smtpTransport: DKIM', () => {
  it.each([
    ['RSA 2048', rsa, 'rsa-sha256'],
    ['Ed25519', ed, 'ed25519-sha256'],
  ])('signs with %s; mailauth verifies the copy the server received', async (_label, key, algo) => {
    const message = richMessage(key);
    await transport.send(composeFor(transport, message));
    const [got] = await sink.waitFor(1);
    if (!got) throw new Error('nothing received');
    expect(await verify(got.raw)).toEqual([
      {
        result: 'pass',
        domain: DOMAIN,
        selector: key.selector,
        algo,
        info: expect.stringContaining('dkim=pass'),
      },
    ]);
    const names = signedHeaderNames(got.raw);
    for (const name of [
      'from',
      'to',
      'subject',
      'message-id',
      'date',
      'list-unsubscribe',
      'list-unsubscribe-post',
    ]) {
      expect(names).toContain(name);
    }
    // From is signed once more than it occurs, so no second From can be added.
    expect(names.filter((n) => n === 'from')).toHaveLength(2);
    expect(got.raw.toString('latin1')).toMatch(
      /^DKIM-Signature: v=1;\r\n\ta=[a-z0-9-]+;\r\n\tc=relaxed\/relaxed;/,
    );
  });

  it('signs a text-only message with no optional headers', async () => {
    await transport.send(
      composeFor(
        transport,
        makeMessage({
          from: { address: `a@${DOMAIN}`, name: '' },
          dkim: { selector: rsa.selector, privateKey: rsa.pem, domain: DOMAIN },
        }),
      ),
    );
    const [got] = await sink.waitFor(1);
    if (!got) throw new Error('nothing received');
    expect((await verify(got.raw))[0]?.result).toBe('pass');
  });

  it('a changed subject or body no longer verifies (the check can fail)', async () => {
    await transport.send(composeFor(transport, richMessage(rsa)));
    const [got] = await sink.waitFor(1);
    if (!got) throw new Error('nothing received');
    const raw = got.raw.toString('latin1');
    const subject = Buffer.from(raw.replace(/^Subject: .*$/m, 'Subject: changed'), 'latin1');
    expect((await verify(subject))[0]?.result).toBe('fail');
    const body = Buffer.from(raw.replace(/bytes\.bin/, 'bytes.exe'), 'latin1');
    // mailauth reports a body-hash mismatch as "neutral" (RFC 6376 leaves it to the verifier).
    expect(await verify(body)).toMatchObject([
      { result: 'neutral', info: expect.stringMatching(/body hash did not verify/) },
    ]);
  });

  it('signs nothing when the message has no key', async () => {
    await transport.send(composeFor(transport, makeMessage()));
    const [got] = await sink.waitFor(1);
    expect(got?.raw.toString('latin1')).not.toMatch(/DKIM-Signature/i);
  });

  it('parses each distinct key once, not per message', async () => {
    const parse = vi.mocked(createPrivateKey);
    const signing = smtpTransport({ host: sink.host, port: sink.port });
    // The core's composer signs (one per worker in the engine): its key cache is what is measured.
    const composer = outgoingComposer(signing.capabilities);
    try {
      parse.mockClear();
      await Promise.all(Array.from({ length: 20 }, () => signing.send(composer.compose(richMessage(rsa)))));
      expect(parse).toHaveBeenCalledTimes(1);
      await Promise.all(Array.from({ length: 5 }, () => signing.send(composer.compose(richMessage(ed)))));
      await signing.send(composer.compose(richMessage(rsa)));
      expect(parse).toHaveBeenCalledTimes(2);
      // Same PEM under another selector is another key: its own cache entry.
      await signing.send(composer.compose(richMessage({ ...rsa, selector: 'other' })));
      expect(parse).toHaveBeenCalledTimes(3);
    } finally {
      await signing.close();
    }
    const results = await Promise.all(sink.messages.slice(0, 26).map((m) => verify(m.raw)));
    expect(results.every((r) => r[0]?.result === 'pass')).toBe(true);
  });

  it('an unusable key fails the send permanently, with no reply code, and nothing is sent unsigned', async () => {
    const broken = {
      selector: 'broken',
      privateKey: '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----',
      domain: DOMAIN,
    };
    // The core composes and signs: the key fails the message there, before anything reaches the transport.
    const error = await sendVia(transport, makeMessage({ dkim: broken })).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'MailroomError', code: 'TRANSPORT_PERMANENT', retryable: false });
    expect((error as { responseCode?: number }).responseCode).toBeUndefined();
    const { privateKey: ec } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const unsupported = { selector: 'ec', privateKey: pem(ec), domain: DOMAIN };
    await expect(sendVia(transport, makeMessage({ dkim: unsupported }))).rejects.toMatchObject({
      code: 'TRANSPORT_PERMANENT',
    });
    const injected = { selector: 'a;\r\nBcc: x@example.net', privateKey: rsa.pem, domain: DOMAIN };
    await expect(sendVia(transport, makeMessage({ dkim: injected }))).rejects.toMatchObject({
      code: 'TRANSPORT_PERMANENT',
    });
    expect(sink.messages).toHaveLength(0);
  });

  it('the outbox transport signs its .eml files the same way', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailroom-dkim-outbox-'));
    try {
      const outbox = outboxTransport({ dir, fsync: false });
      await outbox.send(composeFor(outbox, richMessage(rsa)));
      await outbox.send(composeFor(outbox, richMessage(ed)));
      const files = await readdir(dir);
      expect(files).toHaveLength(2);
      for (const name of files) {
        expect((await verify(await readFile(join(dir, name))))[0]?.result).toBe('pass');
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('covers the List-Unsubscribe pair in the default header list', () => {
    expect(DKIM_SIGNED_HEADERS).toEqual(
      expect.arrayContaining(['from', 'subject', 'message-id', 'list-unsubscribe', 'list-unsubscribe-post']),
    );
  });
});
