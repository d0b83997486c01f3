import { readFileSync } from 'node:fs';
import { createMailroom, type Mailroom, MailroomError, manualClock } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { afterEach, describe, expect, it } from 'vitest';
import {
  RETRY_BY_REASON,
  type RetryPlan,
  type RetryReason,
  retryReasonOf,
} from '../packages/core/src/delivery/retry-by-reason.js';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

/**
 * Retries by reason (issue 35): the one table (packages/core/src/delivery/retry-by-reason.ts) and its
 * documentation agree; temporary refusals are told apart by their words; and through the engine, with a
 * relay on 127.0.0.1 refusing RCPT TO and a clock the test controls: greylisting is retried after minutes,
 * a full mailbox after hours, a block of the sender is not retried (and suppresses nothing), and any other
 * 4xx keeps the worker's backoff.
 */
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const START = new Date('2031-06-01T10:00:00.000Z');

/** A duration as the docs write it: `5 min`, `4 h`, `1 d`. */
function duration(ms: number | undefined): string {
  if (ms === undefined) return '-';
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000} d`;
  if (ms % HOUR === 0) return `${ms / HOUR} h`;
  return `${ms / MINUTE} min`;
}

/** The docs' row of one plan: reason, handling, first retry, longest wait, retried for. */
function row(reason: RetryReason, plan: RetryPlan): string[] {
  const s = plan.kind === 'schedule' ? plan : undefined;
  const windowMs = 'windowMs' in plan ? plan.windowMs : undefined;
  return [reason, plan.kind, duration(s?.firstMs), duration(s?.maxMs), duration(windowMs)];
}

describe('the retry table', () => {
  it('docs/retries.md shows exactly the code table', () => {
    const doc = readFileSync(new URL('../docs/retries.md', import.meta.url), 'utf8');
    // The first table of the page: from its header to the first line that is not a row.
    const lines = doc.split('\n');
    const head = lines.findIndex((l) => /^\| reason +\| handling/.test(l));
    const end = lines.findIndex((l, i) => i > head && !l.startsWith('|'));
    const rows = lines.slice(head + 2, end).map((l) =>
      l
        .split('|')
        .slice(1, 6)
        .map((c) => c.trim().replace(/`/g, '')),
    );
    const expected = (Object.entries(RETRY_BY_REASON) as Array<[RetryReason, RetryPlan]>).map(([r, p]) =>
      row(r, p),
    );
    expect(rows).toEqual(expected);
  });

  const reply = (code: number, response: string) =>
    new MailroomError('TRANSPORT_TRANSIENT', response, { responseCode: code, response, retryable: true });
  const cases: Array<[number, string, RetryReason]> = [
    [451, '451 4.7.1 Greylisting in action, please come back later', 'greylisting'],
    [
      450,
      '450 4.7.1 <ann@example.org>: Recipient address rejected: Greylisted, see http://postgrey',
      'greylisting',
    ],
    [451, '451 4.7.1 Please try again later', 'greylisting'],
    [451, '451 4.7.1 Service unavailable', 'greylisting'],
    [452, '452 4.2.2 The email account that you tried to reach is over quota', 'mailboxfull'],
    [452, '452 4.2.2 Mailbox full', 'mailboxfull'],
    [452, '452 4.3.1 Insufficient system storage', 'other'],
    [452, '452 4.2.2 Insufficient system storage', 'other'],
    [421, '421 4.7.28 Our system has detected an unusual rate of unsolicited mail', 'rate-limit'],
    [450, '450 4.7.0 too many messages this hour', 'rate-limit'],
    [
      421,
      '421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected volume or user complaints',
      'rate-limit',
    ],
    [451, '451 4.7.1 Client host [192.0.2.1] blocked using zen.spamhaus.org', 'sender-block'],
    [451, '451 4.7.650 The mail server has been temporarily rate limited due to IP reputation', 'rate-limit'],
    [450, '450 4.7.1 Client host rejected: cannot find your reverse hostname', 'sender-block'],
    [451, '451 4.3.0 Temporary local problem', 'other'],
    [452, '452 4.3.4 Message size exceeds fixed limit', 'message-refused'],
    [451, '451 4.7.1 Message content rejected: virus found', 'message-refused'],
    [451, '451 4.3.0 Temporary failure, try again later', 'other'],
    [550, '550 5.7.1 Client host blocked using zen.spamhaus.org', 'other'],
  ];
  for (const [code, text, reason] of cases) {
    it(`"${text}": ${reason}`, () => {
      expect(retryReasonOf(reply(code, text))).toBe(reason);
    });
  }
});

describe('temporary refusals retried by reason, through a relay on 127.0.0.1', () => {
  let sink: SmtpSink | undefined;
  let mailroom: Mailroom | undefined;
  afterEach(async () => {
    await mailroom?.close();
    await sink?.close();
  });

  it('greylisting after minutes, a full mailbox after hours, a block never, anything else soon', async () => {
    const refusing = new Map<string, { code: number; message: string }>([
      ['grey@example.org', { code: 451, message: '4.7.1 Greylisted, please try again later' }],
      ['full@example.org', { code: 452, message: '4.2.2 <full@example.org>: Mailbox full' }],
      [
        'blocked@example.org',
        { code: 451, message: '4.7.1 Client host [127.0.0.1] blocked using zen.spamhaus.org' },
      ],
      ['busy@example.org', { code: 451, message: '4.3.0 Temporary local problem' }],
    ]);
    sink = await startSmtpSink({ rejectRecipient: (address) => refusing.get(address) });
    const clock = manualClock(START);
    mailroom = createMailroom({
      store: (await import('@mailroom/memory')).memoryStore(),
      transport: smtpTransport(sink.url),
      clock,
      worker: { pollMs: 10, flushMs: 10 },
    });
    const engine = mailroom;
    const { project, secret } = await engine.admin.createProject({ name: 'Acme' });
    await engine.admin.addSender(project.id, { address: 'news@acme.test' });
    const { ref } = await engine.broadcast(secret, {
      sender: 'news@acme.test',
      subject: 'News',
      message: 'Hello',
      recipients: [...refusing.keys()],
    });
    await engine.worker.drain({ retries: 'leave' });
    const get = (address: string) => engine.getDelivery(secret, ref, address);
    const waits = async (address: string) => {
      const d = await get(address);
      expect(d.status, address).toBe('queued');
      return d.nextAttemptAt.getTime() - clock.now().getTime();
    };
    // Greylisting: between 2.5 and 5 minutes (the first step of 5 min, jittered on its upper half).
    const grey = await waits('grey@example.org');
    expect(grey).toBeGreaterThanOrEqual(2.5 * MINUTE - 1_000);
    expect(grey).toBeLessThanOrEqual(5 * MINUTE);
    // A full mailbox: hours, not minutes.
    const full = await waits('full@example.org');
    expect(full).toBeGreaterThanOrEqual(2 * HOUR - 1_000);
    expect(full).toBeLessThanOrEqual(4 * HOUR);
    // Any other 4xx: the worker's own backoff (a second or so).
    expect(await waits('busy@example.org')).toBeLessThan(MINUTE);
    // A block of the sender: held (queued until resumed, 3 days at most), recorded as sender-side, the
    // address not suppressed.
    const blocked = await get('blocked@example.org');
    expect(blocked.status).toBe('queued');
    expect(blocked.lastError).toMatch(/held until resumed/);
    expect(await waits('blocked@example.org')).toBeGreaterThan(2 * 24 * HOUR);
    expect(await engine.store.findSuppressed(project.id, ['blocked@example.org'])).toEqual([]);
    const signals = await engine.store.listInboundSignals(blocked.id);
    expect(signals.map((s) => [s.kind, s.reason])).toEqual([['sender-side', 'blocked']]);

    // The greylisting server takes the message once it has waited.
    refusing.delete('grey@example.org');
    clock.advance(5 * MINUTE);
    await engine.worker.drain({ retries: 'leave' });
    expect((await get('grey@example.org')).status).toBe('sent');
    expect(sink.messages.flatMap((m) => m.envelope.rcptTo)).toEqual(['grey@example.org']);
    // The full mailbox is not tried again within those minutes, nor the held block.
    expect((await get('full@example.org')).attempts).toBe(1);
    expect((await get('blocked@example.org')).attempts).toBe(1);

    // Not resumed within 3 days: the hold ends, and the delivery fails with the refusal it was held for.
    clock.advance(3 * 24 * HOUR);
    await engine.worker.drain({ retries: 'leave' });
    const expired = await get('blocked@example.org');
    expect(expired.status).toBe('failed');
    expect(expired.lastError).toMatch(/blocked using zen\.spamhaus\.org.*not resumed within 3 d/);
    expect(sink.messages.flatMap((m) => m.envelope.rcptTo)).not.toContain('blocked@example.org');
  });

  it('a held block is sent again once its destination is resumed, and not before', async () => {
    let blocking = true;
    sink = await startSmtpSink({
      rejectRecipient: () =>
        blocking
          ? { code: 554, message: '5.7.1 Service unavailable; Client host blocked using zen.spamhaus.org' }
          : undefined,
    });
    const clock = manualClock(START);
    mailroom = createMailroom({
      store: (await import('@mailroom/memory')).memoryStore(),
      transport: smtpTransport(sink.url),
      clock,
      worker: { pollMs: 10, flushMs: 10 },
    });
    const engine = mailroom;
    const { project, secret } = await engine.admin.createProject({ name: 'Acme' });
    await engine.admin.addSender(project.id, { address: 'news@acme.test' });
    const { ref } = await engine.broadcast(secret, {
      sender: 'news@acme.test',
      subject: 'News',
      message: 'Hello',
      recipients: ['ann@example.org', 'bob@example.net'],
    });
    await engine.worker.drain({ retries: 'leave' });
    const get = (address: string) => engine.getDelivery(secret, ref, address);
    for (const address of ['ann@example.org', 'bob@example.net']) {
      expect((await get(address)).status).toBe('queued');
    }
    clock.advance(HOUR);
    await engine.worker.drain({ retries: 'leave' });
    expect((await get('ann@example.org')).attempts).toBe(1);
    blocking = false;
    // Resuming one destination releases only its own held deliveries.
    await engine.resumeDestination(secret, 'example.org');
    await engine.worker.drain({ retries: 'leave' });
    expect((await get('ann@example.org')).status).toBe('sent');
    expect((await get('bob@example.net')).status).toBe('queued');
    expect(sink.messages.flatMap((m) => m.envelope.rcptTo)).toEqual(['ann@example.org']);
    expect(await engine.store.findSuppressed(project.id, ['ann@example.org', 'bob@example.net'])).toEqual([]);
  });
});
