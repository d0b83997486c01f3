/**
 * The core's parsers and classifiers against their time bounds: refusal classification per second,
 * hostile bounce notices, huge or hostile send requests, strict base64, HTML detection. Each bound is in
 * milliseconds of this process's CPU, so this file runs alone (test/support/test-groups.ts, `*.exclusive`),
 * after the parallel part of the run; the same modules' ordinary tests (bounce-phrases, bounce-corpus,
 * request-robustness, request-attachments, render-content-source) run beside the others.
 */
import { describe, expect, it } from 'vitest';
import { classifyReason, type ReasonInput } from '../src/inbound/classify-reason.js';
import { contentFromMessage } from '../src/render/index.js';
import { isStrictBase64 } from '../src/request/attachments.js';
import { parseBroadcastRequest, parseSendRequest } from '../src/request/index.js';
import { onlyValidationErrors, validSend } from './request-outcomes.js';

describe('the phrase tables', () => {
  it('classify well over 2,000 refusals a second (compiled once, nothing built per call)', () => {
    const replies: ReasonInput[] = [
      {
        status: '5.1.1',
        diagnostic:
          '550 5.1.1 <ann@example.org>: Recipient address rejected: User unknown in local recipient table',
        command: 'RCPT',
      },
      {
        status: '5.7.1',
        diagnostic: '550 5.7.1 Service unavailable, Client host [192.0.2.1] blocked using Spamhaus',
      },
      {
        status: null,
        diagnostic: "554 delivery error: dd This user doesn't have a yahoo.com account (ann@yahoo.com) [-5]",
      },
      { status: '4.2.2', diagnostic: '452 4.2.2 The email account that you tried to reach is over quota' },
      {
        status: '5.0.0',
        diagnostic: '550 5.0.0 Message rejected for an unusual reason no table knows, said at length '.repeat(
          4,
        ),
      },
    ];
    const n = 20_000;
    const started = performance.now();
    for (let i = 0; i < n; i++) classifyReason(replies[i % replies.length] as ReasonInput);
    const perSecond = n / ((performance.now() - started) / 1000);
    // Far above the 2,000 a second the sender needs, with room for a busy shared machine.
    expect(perSecond).toBeGreaterThan(10_000);
  });
});

describe('reading notices stays fast on hostile input', () => {
  it('a notice with megabytes of unbroken text is read in well under a second', async () => {
    const { parseInboundMessage } = await import('../src/inbound/parse-inbound.js');
    const head =
      'From: Mail Delivery System <MAILER-DAEMON@example.org>\r\nSubject: Undelivered Mail\r\n\r\n';
    for (const filler of [
      'a'.repeat(4_000_000),
      `${'x.'.repeat(2_000_000)}@`,
      `<${'a-'.repeat(2_000_000)}`,
    ]) {
      const started = performance.now();
      const report = await parseInboundMessage(Buffer.from(`${head}Delivery failed. ${filler}\r\n`));
      expect(['bounce', 'unrecognised']).toContain(report.type);
      expect(performance.now() - started).toBeLessThan(3_000);
    }
  });
});

describe('size and speed', () => {
  it('refuses a huge recipients list without walking it', () => {
    const recipients = Array.from({ length: 100_000 }, (_, i) => ({ address: `u${i}@example.com` }));
    const started = performance.now();
    expect(onlyValidationErrors(() => parseBroadcastRequest({ broadcastRef: 'bc_1', recipients }))).toBe(
      'refused',
    );
    expect(onlyValidationErrors(() => parseSendRequest({ ...validSend, recipients }))).toBe('refused');
    expect(performance.now() - started).toBeLessThan(50);
  });

  it('refuses megabyte strings in address fields fast', () => {
    const huge = `${'a'.repeat(2_000_000)}@example.com`;
    const started = performance.now();
    expect(onlyValidationErrors(() => parseSendRequest({ ...validSend, sender: huge }))).toBe('refused');
    expect(onlyValidationErrors(() => parseSendRequest({ ...validSend, recipients: `X <${huge}>` }))).toBe(
      'refused',
    );
    expect(onlyValidationErrors(() => parseSendRequest({ ...validSend, replyAddress: huge }))).toBe(
      'refused',
    );
    expect(performance.now() - started).toBeLessThan(100);
  });

  it('validates a 250-recipient broadcast in a few milliseconds', () => {
    const body = JSON.stringify({
      subject: 'News for {{profile.firstName}}',
      sender: { address: 'news@example.com', name: 'News' },
      template: { ref: 'monthly', variables: { month: 'May' } },
      recipients: Array.from({ length: 250 }, (_, i) => ({
        address: `user${i}@Example.com`,
        name: `User ${i}`,
        variables: { firstName: `U${i}`, n: i },
      })),
      options: { storeContent: true, scheduleFor: '2025-12-25T10:00:00Z' },
    });
    for (let i = 0; i < 20; i++) parseBroadcastRequest(JSON.parse(body));
    const times: number[] = [];
    for (let i = 0; i < 15; i++) {
      const parsedBody = JSON.parse(body);
      const started = performance.now();
      const parsed = parseBroadcastRequest(parsedBody);
      times.push(performance.now() - started);
      expect(parsed.kind === 'initial' && parsed.request.recipients.length).toBe(250);
    }
    times.sort((a, b) => a - b);
    // The median on these noisy shared 2-core machines: a few ms is typical, 25 leaves headroom.
    expect(times[Math.floor(times.length / 2)]).toBeLessThan(25);
  });
});

describe('helpers', () => {
  it('checks base64 strictly and in linear time', () => {
    expect(isStrictBase64('')).toBe(true);
    expect(isStrictBase64('QUJD')).toBe(true);
    expect(isStrictBase64('QUI=')).toBe(true);
    expect(isStrictBase64('QQ==')).toBe(true);
    expect(isStrictBase64('QQ=')).toBe(false);
    expect(isStrictBase64('Q===')).toBe(false);
    expect(isStrictBase64('QUJD_-==')).toBe(false);
    const hostile = `${'A'.repeat(4_000_000)}=A==`;
    const started = performance.now();
    expect(isStrictBase64(hostile)).toBe(false);
    expect(performance.now() - started).toBeLessThan(200);
  });
});

describe('contentFromMessage', () => {
  it('detects in linear time on hostile input', () => {
    const started = performance.now();
    expect(contentFromMessage('<a'.repeat(200_000)).html).toBeNull();
    expect(contentFromMessage('<a '.repeat(200_000)).html).toBeNull();
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
