/**
 * The Transport conformance kit. Every transport runs it from a test file of one line:
 *
 * ```ts
 * transportTestSuite('smtp', async () => ({ transport, received: () => sink.received(), close }));
 * ```
 *
 * It is transport-neutral: it composes each message as the engine does (`outgoingComposer` with the
 * transport's capabilities), sends it through `transport.send` and reads what arrived back through the
 * context's `received()` (an SMTP sink, a folder of `.eml` files, a memory outbox).
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outgoingComposer } from '../mime/outgoing-composer.js';
import type { Mailbox } from '../store/records.js';
import type { OutgoingMessage, SendReceipt, Transport } from '../transport/transport.js';

/** A message as the far side of a transport saw it, decoded. */
export interface ReceivedMessage {
  /** The Message-ID header, with angle brackets. */
  messageId: string;
  /** The From header; `name` is `''` when there is none. */
  from: Mailbox;
  /** The To header; `name` is `''` when there is none. */
  to: Mailbox;
  /** The Reply-To address, when there is one. */
  replyTo?: string;
  /** The decoded subject. */
  subject: string;
  /** The plain-text part. */
  text?: string;
  /** The HTML part; absent for a text-only message. */
  html?: string;
  /** Attachments, decoded to their bytes (a calendar part is not one). */
  attachments: Array<{ filename: string; content: Uint8Array }>;
  /** Header values by name, unfolded; names are compared case-insensitively. */
  headers: Record<string, string>;
  /**
   * The envelope sender the far side saw (SMTP `MAIL FROM`, an outbox file's `Return-Path`); required by
   * the `envelope-sender` case.
   */
  envelopeFrom?: string;
}

/** What the kit needs from a transport under test. */
export interface TransportTestContext {
  /** The transport under test. */
  transport: Transport;
  /** Every message that arrived so far, in any order. */
  received(): Promise<ReceivedMessage[]>;
  /** Releases the transport and whatever receives its messages. */
  close(): Promise<void>;
}

/** The cases of the kit, by id, for {@link TransportTestSuiteOptions.skip}. */
export type TransportTestCase =
  | 'capabilities'
  | 'receipt'
  | 'names'
  | 'alternatives'
  | 'reply-to'
  | 'attachments'
  | 'headers'
  | 'text-only'
  | 'envelope-sender'
  | 'signed'
  | 'concurrent';

/** Toggles of the kit. */
export interface TransportTestSuiteOptions {
  /**
   * Cases to skip, each with the reason, which the kit prints in the test name.
   * @example { attachments: 'the provider API drops attachments in sandbox mode' }
   */
  skip?: Partial<Record<TransportTestCase, string>>;
  /**
   * How long to wait for a sent message to show up in `received()`.
   * @default 5000
   */
  arrivalTimeoutMs?: number;
}

/**
 * Runs the Transport conformance kit as a vitest `describe` block: a message arrives with its
 * Message-ID, display names (non-ASCII ones included), subject, both alternatives, Reply-To,
 * attachments byte for byte, extra headers (`List-Unsubscribe`); text-only messages; the envelope
 * sender; the core's DKIM signature arrives as composed (unless the transport declares `dkim: false`);
 * the receipt lists the recipient as accepted; capabilities are declared.
 *
 * @param name Name of the transport, used in the test titles.
 * @param factory Builds a fresh context once for the whole block; `close()` runs after it.
 * @param options Skips (with reasons) and timeouts.
 */
export function transportTestSuite(
  name: string,
  factory: () => Promise<TransportTestContext> | TransportTestContext,
  options: TransportTestSuiteOptions = {},
): void {
  const skip = options.skip ?? {};
  const arrivalTimeoutMs = options.arrivalTimeoutMs ?? 5000;

  describe(`Transport conformance: ${name}`, () => {
    let ctx: TransportTestContext | undefined;
    const context = (): TransportTestContext => {
      if (!ctx) throw new Error('transportTestSuite: the factory did not return a context');
      return ctx;
    };

    beforeAll(async () => {
      ctx = await factory();
    });
    afterAll(async () => {
      await ctx?.close();
    });

    const test = (id: TransportTestCase, title: string, fn: () => Promise<void>): void => {
      const reason = skip[id];
      if (reason) it.skip(`${title} (skipped: ${reason})`, fn);
      else it(title, fn);
    };

    /** Composes `message` for the transport under test as the engine does, and sends it. */
    const send = (message: OutgoingMessage): Promise<SendReceipt> => {
      const { transport } = context();
      return transport.send(outgoingComposer(transport.capabilities).compose(message));
    };

    /** Sends and waits until the message shows up on the far side. */
    async function roundTrip(
      message: OutgoingMessage,
    ): Promise<{ receipt: SendReceipt; got: ReceivedMessage }> {
      const receipt = await send(message);
      const got = await arrival(context(), message.messageId, arrivalTimeoutMs);
      return { receipt, got };
    }

    test('capabilities', 'declares its name and capabilities', async () => {
      const { transport } = context();
      expect(typeof transport.name).toBe('string');
      expect(transport.name.length).toBeGreaterThan(0);
      expect(typeof transport.capabilities.dkim).toBe('boolean');
      expect(Number.isInteger(transport.capabilities.maxConcurrency)).toBe(true);
      expect(transport.capabilities.maxConcurrency).toBeGreaterThanOrEqual(1);
    });

    test(
      'receipt',
      'delivers with the given Message-ID and returns a receipt accepting the recipient',
      async () => {
        const message = baseMessage({ to: { address: 'receipt@example.org', name: 'Receipt' } });
        const { receipt, got } = await roundTrip(message);
        expect(receipt.messageId).toBe(message.messageId);
        expect(receipt.accepted.map((a) => a.toLowerCase())).toContain('receipt@example.org');
        expect(receipt.rejected).toEqual([]);
        expect(typeof receipt.response).toBe('string');
        expect(got.messageId).toBe(message.messageId);
      },
    );

    test('names', 'keeps display names and the subject, non-ASCII ones included', async () => {
      const message = baseMessage({
        from: { address: 'zoe@example.com', name: 'Zoë Ångström, "Mailroom"' },
        to: { address: 'taro@example.org', name: '山田 太郎' },
        subject: 'Grüße aus Köln — 🎉 réunion № 5',
      });
      const { got } = await roundTrip(message);
      expect(got.from).toEqual(message.from);
      expect(got.to).toEqual(message.to);
      expect(got.subject).toBe(message.subject);
    });

    test('alternatives', 'sends the text and the HTML alternatives', async () => {
      const html = `<!doctype html><html><body><h1>Hello, Zoë</h1><p>${'Long paragraph. '.repeat(200)}</p></body></html>`;
      const message = baseMessage({ text: 'Hello, Zoë\n\nThe plain version — with ünïcödé.', html });
      const { got } = await roundTrip(message);
      expect(normalizeBody(got.text)).toBe(normalizeBody(message.text));
      expect(normalizeBody(got.html)).toBe(normalizeBody(html));
    });

    test('reply-to', 'sets Reply-To', async () => {
      const message = baseMessage({ replyTo: 'replies@example.com' });
      const { got } = await roundTrip(message);
      expect(got.replyTo?.toLowerCase()).toBe('replies@example.com');
    });

    test('attachments', 'attaches files byte for byte', async () => {
      const everyByte = Uint8Array.from({ length: 512 }, (_, i) => i % 256);
      const lfText = new TextEncoder().encode('line one\nline two\r\nline three\rno newline at the end ünï');
      const message = baseMessage({
        attachments: [
          { filename: 'bytes.bin', contentType: 'application/octet-stream', content: everyByte },
          { filename: 'notes.txt', contentType: 'text/plain', content: lfText },
          {
            filename: 'résumé.pdf',
            contentType: 'application/pdf',
            content: new TextEncoder().encode('%PDF-1.4\n%âãÏÓ\n'),
          },
        ],
      });
      const { got } = await roundTrip(message);
      expect(got.attachments.map((a) => a.filename).sort()).toEqual(['bytes.bin', 'notes.txt', 'résumé.pdf']);
      for (const sent of message.attachments) {
        const arrived = got.attachments.find((a) => a.filename === sent.filename);
        expect(arrived, sent.filename).toBeDefined();
        expect(Array.from(arrived?.content ?? []), sent.filename).toEqual(Array.from(sent.content));
      }
    });

    test(
      'envelope-sender',
      'uses envelopeFrom as the envelope sender (else From), header From unchanged',
      async () => {
        const envelopeFrom = 'b+dlv_0abc123-0123456789abcdef@bounces.example.net';
        const verp = baseMessage({ envelopeFrom });
        const plain = baseMessage();
        const a = await roundTrip(verp);
        const b = await roundTrip(plain);
        expect(a.got.envelopeFrom).toBe(envelopeFrom);
        expect(a.got.from.address).toBe(verp.from.address);
        expect(b.got.envelopeFrom).toBe(plain.from.address);
      },
    );

    test('headers', 'adds the extra headers (List-Unsubscribe and List-Unsubscribe-Post)', async () => {
      const unsubscribe = `<https://example.com/unsubscribe/${'t'.repeat(120)}?p=1>, <mailto:unsubscribe@example.com?subject=unsubscribe>`;
      const message = baseMessage({
        headers: { 'List-Unsubscribe': unsubscribe, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      });
      const { got } = await roundTrip(message);
      expect(normalizeHeader(headerOf(got, 'List-Unsubscribe'))).toBe(unsubscribe);
      expect(normalizeHeader(headerOf(got, 'List-Unsubscribe-Post'))).toBe('List-Unsubscribe=One-Click');
    });

    test(
      'signed',
      'delivers the bytes as the core signed them (a DKIM-Signature of the sender domain)',
      async () => {
        // A transport that declares `dkim: false` is handed unsigned bytes: nothing to see.
        if (!context().transport.capabilities.dkim) return;
        const { privateKey } = generateKeyPairSync('ed25519');
        const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
        const message = baseMessage({ dkim: { selector: 'kit', privateKey: pem, domain: 'example.com' } });
        const { got } = await roundTrip(message);
        const signature = normalizeHeader(headerOf(got, 'DKIM-Signature')) ?? '';
        expect(signature).toMatch(/\bd=example\.com;/);
        expect(signature).toMatch(/\bs=kit;/);
      },
    );

    test('text-only', 'sends a text-only message without an HTML part', async () => {
      const message = baseMessage({ to: { address: 'plain@example.org', name: '' }, text: 'Just text.' });
      const { got } = await roundTrip(message);
      expect(got.html).toBeUndefined();
      expect(normalizeBody(got.text)).toBe('Just text.');
      expect(got.attachments).toEqual([]);
      expect(got.to).toEqual({ address: 'plain@example.org', name: '' });
    });

    test('concurrent', 'sends several messages at once, each arriving once', async () => {
      const count = Math.min(context().transport.capabilities.maxConcurrency * 2, 12);
      const messages = Array.from({ length: count }, (_, i) =>
        baseMessage({ to: { address: `many${i}@example.org`, name: `Many ${i}` }, subject: `Message ${i}` }),
      );
      const receipts = await Promise.all(messages.map((m) => send(m)));
      expect(receipts.map((r) => r.messageId)).toEqual(messages.map((m) => m.messageId));
      for (const message of messages) {
        const got = await arrival(context(), message.messageId, arrivalTimeoutMs);
        expect(got.subject).toBe(message.subject);
        expect(got.to.address).toBe(message.to.address);
      }
      const all = await context().received();
      const ids = new Set(messages.map((m) => m.messageId));
      expect(all.filter((m) => ids.has(m.messageId))).toHaveLength(count);
    });
  });
}

/** A minimal valid message; each call gets a fresh Message-ID. */
function baseMessage(overrides: Partial<OutgoingMessage> = {}): OutgoingMessage {
  return {
    messageId: `<kit-${randomUUID()}@mailroom.test>`,
    from: { address: 'sender@example.com', name: 'Sender' },
    to: { address: 'recipient@example.org', name: 'Recipient' },
    subject: 'Conformance kit',
    text: 'Hello from the conformance kit.',
    attachments: [],
    headers: {},
    ...overrides,
  };
}

/** Polls `received()` until the message shows up: some transports hand messages over asynchronously. */
async function arrival(
  ctx: TransportTestContext,
  messageId: string,
  timeoutMs: number,
): Promise<ReceivedMessage> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await ctx.received()).find((m) => m.messageId === messageId);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`message ${messageId} did not arrive within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function headerOf(message: ReceivedMessage, name: string): string | undefined {
  const wanted = name.toLowerCase();
  const key = Object.keys(message.headers).find((k) => k.toLowerCase() === wanted);
  return key === undefined ? undefined : message.headers[key];
}

// MIME encoders may fold headers and change line endings or the final newline; those are not content.
function normalizeHeader(value: string | undefined): string | undefined {
  return value
    ?.replace(/\r?\n[ \t]+/g, ' ')
    .replace(/[ \t]+/g, ' ')
    .trim();
}

function normalizeBody(value: string | undefined): string | undefined {
  return value?.replace(/\r\n/g, '\n').replace(/\s+$/, '');
}
