import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMailroom, type Mailroom, type ManualClock, manualClock } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { sqlStore } from '@mailroom/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Listening, listenMailroom } from './support/http-harness.js';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';
import { waitUntil } from './support/wait.js';

/**
 * `POST /send/mail/batch` (issue 41) end to end: real HTTP on 127.0.0.1, SQLite, the SMTP transport and an
 * SMTP sink, and a clock the test moves. Strict and partial modes, idempotency of the batch and of its
 * items, attachments, headers and tags, scheduled items, and the refusals of a bad batch.
 */

const START = new Date('2031-05-04T08:00:00.000Z');
const HOUR = 3_600_000;
const SENDER = 'shop@acme.test';
const BAD = [7, 42, 99];

interface BatchData {
  mode: string;
  accepted: number;
  refused: number;
  items: Array<{
    index: number;
    ref?: string;
    status?: string;
    replayed?: boolean;
    error?: { code: string; message: string; issues: Array<{ path: Array<string | number> }> };
  }>;
}
interface Envelope {
  statusCode: number;
  message: string;
  code?: string;
  data: BatchData;
  issues?: Array<{ path: Array<string | number>; message: string }>;
}

/** A good item to `to`. */
const item = (to: string, extra: Record<string, unknown> = {}) => ({
  subject: 'Receipt {{ order }}',
  sender: SENDER,
  message: '<p>Thank you for order {{ order }}.</p>',
  recipients: [{ address: to, variables: { order: to.split('@')[0] } }],
  ...extra,
});

/** 100 items, 3 of them bad in 3 different ways (a bad address, no body, a header the engine writes). */
function hundredWithThreeBad(tag: string) {
  return Array.from({ length: 100 }, (_, i) => {
    const to = `${tag}-${i}@example.test`;
    if (i === 7) return item('not-an-address', {});
    if (i === 42) return { subject: 'x', sender: SENDER, recipients: to };
    if (i === 99) return item(to, { headers: { Subject: 'override' } });
    return item(to);
  });
}

describe('POST /send/mail/batch on SQLite through the SMTP transport', () => {
  let clock: ManualClock;
  let sink: SmtpSink;
  let mailroom: Mailroom;
  let server: Listening;
  let secret: string;

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/send/mail/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }).then(async (res) => ({
      status: res.status,
      headers: res.headers,
      json: (await res.json()) as Envelope,
    }));
  const arrivedFor = (tag: string) =>
    sink.messages.filter((m) => m.envelope.rcptTo.some((r) => r.startsWith(`${tag}-`)));

  beforeAll(async () => {
    clock = manualClock(START);
    sink = await startSmtpSink();
    const url = join(mkdtempSync(join(tmpdir(), 'mailroom-batch-')), 'mailroom.db');
    mailroom = createMailroom({
      store: sqlStore({ url }),
      transport: smtpTransport({ host: sink.host, port: sink.port, maxConnections: 4 }),
      clock,
    });
    const created = await mailroom.admin.createProject({ name: 'Shop' });
    secret = created.secret;
    await mailroom.admin.addSender(created.project.id, { address: SENDER, name: 'Shop' });
    server = await listenMailroom('express', mailroom);
  });

  afterAll(async () => {
    await server?.close();
    await mailroom?.close();
    await sink?.close();
  });

  it('strict: one bad item refuses the whole batch, a 400 naming every bad item by index and path', async () => {
    const res = await post({ items: hundredWithThreeBad('strict'), mode: 'strict' });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('VALIDATION_FAILED');
    const indexes = [...new Set((res.json.issues ?? []).map((i) => i.path[1]))];
    expect(indexes).toEqual(BAD);
    const paths = (res.json.issues ?? []).map((i) => i.path.join('.'));
    expect(paths).toContain('items.7.recipients.0.address');
    expect(paths).toContain('items.42.message');
    expect(paths).toContain('items.99.headers.Subject');
    expect(res.json.message).toContain('7, 42, 99');
    await mailroom.worker.drain();
    expect(arrivedFor('strict')).toEqual([]);
    // A bare array is a strict batch too.
    expect((await post(hundredWithThreeBad('strict'))).status).toBe(400);
  });

  it('partial: the 97 good items arrive at the sink, the 3 bad ones are answered by index', async () => {
    const res = await post({ items: hundredWithThreeBad('partial'), mode: 'partial' });
    expect(res.status).toBe(200);
    expect(res.json.statusCode).toBe(200);
    expect(res.json.data).toMatchObject({ mode: 'partial', accepted: 97, refused: 3 });
    expect(res.json.data.items).toHaveLength(100);
    expect(res.json.data.items.map((i) => i.index)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    const refused = res.json.data.items.filter((i) => i.error);
    expect(refused.map((i) => i.index)).toEqual(BAD);
    expect(refused.every((i) => i.error?.code === 'VALIDATION_FAILED')).toBe(true);
    expect(refused[0]?.error?.issues[0]?.path.slice(0, 2)).toEqual(['items', 7]);
    const refs = res.json.data.items.filter((i) => i.ref).map((i) => i.ref);
    expect(new Set(refs).size).toBe(97);
    await mailroom.worker.drain();
    await sink.waitFor(97);
    const arrived = arrivedFor('partial');
    expect(arrived).toHaveLength(97);
    const sample = arrived.find((m) => m.envelope.rcptTo[0] === 'partial-3@example.test');
    expect(sample?.parsed.html).toContain('Thank you for order partial-3.');
    // Each item is a message of its own: its status reads by its ref.
    const first = await mailroom.getMessage(secret, refs[0] as string);
    expect(first.status).toBe('completed');
  });

  it('the same Idempotency-Key twice answers the first result and sends nothing more', async () => {
    const body = { items: [item('idem-1@example.test'), item('idem-2@example.test')], mode: 'partial' };
    const first = await post(body, { 'idempotency-key': 'nightly-2031-05-04' });
    expect(first.status).toBe(200);
    await mailroom.worker.drain();
    await waitUntil(() => arrivedFor('idem').length >= 2);
    const again = await post(body, { 'idempotency-key': 'nightly-2031-05-04' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.data).toEqual(first.json.data);
    // The same key with another body is a conflict, not a send.
    const other = await post(
      { items: [item('idem-3@example.test')] },
      { 'idempotency-key': 'nightly-2031-05-04' },
    );
    expect(other.status).toBe(409);
    await mailroom.worker.drain();
    expect(arrivedFor('idem')).toHaveLength(2);
  });

  it("an item's own idempotency key answers its first result, in a later batch too", async () => {
    const keyed = item('own-1@example.test', { idempotencyKey: 'receipt-own-1' });
    const first = await post({ items: [keyed, item('own-2@example.test')] });
    expect(first.json.data.accepted).toBe(2);
    const again = await post({ items: [keyed, item('own-3@example.test')] });
    expect(again.status).toBe(200);
    expect(again.json.data.items[0]).toMatchObject({
      index: 0,
      ref: first.json.data.items[0]?.ref,
      replayed: true,
    });
    // The item key is in the namespace of POST /send/mail's key: the same body with it there replays too.
    const single = await fetch(`${server.url}/send/mail`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${secret}`,
        'content-type': 'application/json',
        'idempotency-key': 'receipt-own-1',
      },
      body: JSON.stringify(keyed),
    });
    expect(single.status).toBe(200);
    expect(single.headers.get('idempotent-replayed')).toBe('true');
    expect(((await single.json()) as { data: { ref: string } }).data.ref).toBe(first.json.data.items[0]?.ref);
    await mailroom.worker.drain();
    expect(
      arrivedFor('own')
        .map((m) => m.envelope.rcptTo[0])
        .sort(),
    ).toEqual(['own-1@example.test', 'own-2@example.test', 'own-3@example.test']);
  });

  it('items with attachments, headers, tags and scheduleFor: each arrives as asked, the scheduled one at its time', async () => {
    const pdf = Buffer.from('%PDF-1.4 receipt').toString('base64');
    const res = await post({
      items: [
        item('att-1@example.test', {
          attachments: [{ name: 'receipt.pdf', content: `data:application/pdf;base64,${pdf}` }],
          headers: { 'X-Order': '1001', 'In-Reply-To': '<order-1001@acme.test>' },
          tags: [{ name: 'kind', value: 'receipt' }],
        }),
        item('att-2@example.test', {
          options: { scheduleFor: new Date(START.getTime() + 2 * HOUR).toISOString() },
          attachments: [{ name: 'notes.txt', content: Buffer.from('hello').toString('base64') }],
        }),
      ],
    });
    expect(res.status).toBe(200);
    expect(res.json.data.items.map((i) => i.status)).toEqual(['queued', 'scheduled']);
    await mailroom.worker.drain();
    await waitUntil(() => arrivedFor('att').length >= 1);
    const [now] = arrivedFor('att');
    expect(now?.envelope.rcptTo).toEqual(['att-1@example.test']);
    expect(now?.parsed.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([
      ['receipt.pdf', '%PDF-1.4 receipt'],
    ]);
    expect(now?.parsed.headers.get('x-order')).toBe('1001');
    expect(now?.parsed.headers.get('in-reply-to')).toBe('<order-1001@acme.test>');
    clock.advance(2 * HOUR - 1);
    await mailroom.worker.drain();
    expect(arrivedFor('att')).toHaveLength(1);
    clock.advance(1);
    await mailroom.worker.drain();
    await waitUntil(() => arrivedFor('att').length >= 2);
    const later = arrivedFor('att')[1];
    expect(later?.envelope.rcptTo).toEqual(['att-2@example.test']);
    expect(later?.parsed.attachments[0]?.filename).toBe('notes.txt');
  });

  it('bad batches: 101 items, a 10 MB body, no items, an unknown mode: clear refusals naming the path', async () => {
    const many = await post({ items: Array.from({ length: 101 }, (_, i) => item(`many-${i}@example.test`)) });
    expect(many.status).toBe(400);
    expect(many.json.issues?.[0]).toMatchObject({ path: ['items'] });
    expect(many.json.message).toContain('At most 100 items');
    const big = 'A'.repeat(10 * 1024 * 1024);
    const huge = await post({
      items: [item('huge@example.test', { attachments: [{ name: 'a.bin', content: big }] })],
    });
    expect(huge.status).toBe(413);
    expect(huge.json.code).toBe('PAYLOAD_TOO_LARGE');
    const none = await post({ items: [] });
    expect(none.status).toBe(400);
    expect(none.json.issues?.[0]?.path).toEqual(['items']);
    const mode = await post({ items: [item('mode@example.test')], mode: 'lenient' });
    expect(mode.status).toBe(400);
    expect(mode.json.issues?.[0]?.path).toEqual(['mode']);
    const notObject = await post('"hello"');
    expect(notObject.status).toBe(400);
    await mailroom.worker.drain();
    expect(sink.messages.some((m) => m.envelope.rcptTo.some((r) => /^(many|huge|mode)/.test(r)))).toBe(false);
  });

  it('an unknown sender or template is the item’s problem: strict refuses, partial sends the rest', async () => {
    const items = [
      item('who-1@example.test'),
      item('who-2@example.test', { sender: 'nobody@acme.test' }),
      { sender: SENDER, recipients: 'who-3@example.test', template: { ref: 'missing' } },
    ];
    const strict = await post({ items });
    expect(strict.status).toBe(400);
    expect((strict.json.issues ?? []).map((i) => i.path.join('.'))).toEqual(['items.1.sender', 'items.2']);
    const partial = await post({ items, mode: 'partial' });
    expect(partial.json.data.items.map((i) => i.error?.code ?? i.status)).toEqual([
      'queued',
      'SENDER_NOT_ALLOWED',
      'NOT_FOUND',
    ]);
  });

  it('an item naming a topic the project lacks is refused as a single send would be', async () => {
    const items = [
      item('topic-1@example.test'),
      item('topic-2@example.test', { options: { topic: 'nope' } }),
    ];
    const partial = await post({ items, mode: 'partial' });
    expect(partial.json.data.items.map((i) => i.error?.code ?? i.status)).toEqual(['queued', 'NOT_FOUND']);
  });
});
