import { classifyRecipient, parseInboundMessage } from '@mailroom/core';
import { describe, expect, it } from 'vitest';
import { inboundFixture } from './inbound-fixtures.js';

const values = {
  returnPath: 'b+dlv_0mk2b3c4d5e6f7g8h9i0j1k2l-0123456789abcdef@bounces.acme.test',
  recipient: 'ann@example.org',
  messageId: '<dlv_0mk2b3c4d5e6f7g8h9i0j1k2l@acme.test>',
};

/** What each fixture must be read as. */
const CORPUS: Array<[string, Record<string, unknown>]> = [
  ['dsn-postfix-hard', { type: 'bounce', format: 'dsn', reason: 'userunknown', status: '5.1.1', id: true }],
  ['dsn-dmarc', { type: 'bounce', format: 'dsn', reason: 'authfailure', status: '5.7.26', id: true }],
  ['dsn-delayed', { type: 'bounce', format: 'dsn', reason: 'expired', status: '4.4.1', id: true }],
  [
    'dsn-exchange-multi',
    { type: 'bounce', format: 'dsn', reason: 'userunknown', status: '5.1.10', id: true },
  ],
  [
    'text-postfix',
    { type: 'bounce', format: 'text-bounce', reason: 'userunknown', status: '5.1.1', id: false },
  ],
  ['text-exim', { type: 'bounce', format: 'text-bounce', reason: 'userunknown', status: null, id: true }],
  ['text-exim-delay', { type: 'bounce', format: 'text-bounce', reason: 'expired', status: null, id: false }],
  ['text-qmail', { type: 'bounce', format: 'text-bounce', reason: 'userunknown', status: '5.1.1', id: true }],
  [
    'text-exchange',
    { type: 'bounce', format: 'text-bounce', reason: 'userunknown', status: '5.1.1', id: true },
  ],
  [
    'text-gmail',
    { type: 'bounce', format: 'text-bounce', reason: 'userunknown', status: '5.1.1', id: false },
  ],
  [
    'text-gmail-full',
    { type: 'bounce', format: 'text-bounce', reason: 'mailboxfull', status: '4.2.2', id: false },
  ],
  ['arf-complaint', { type: 'complaint' }],
  ['auto-ooo', { type: 'auto-reply' }],
  ['auto-vacation', { type: 'auto-reply' }],
  ['auto-challenge', { type: 'auto-reply' }],
  ['not-a-bounce', { type: 'unrecognised' }],
];

describe('inbound corpus: DSNs, ARF, plain-text bounces of common MTAs, auto-replies', () => {
  for (const [name, want] of CORPUS) {
    it(`${name} is read as ${want.type}${want.reason ? ` (${want.reason})` : ''}`, async () => {
      const report = await parseInboundMessage(inboundFixture(name, values));
      expect(report.type).toBe(want.type);
      if (report.type === 'bounce') {
        expect(report.format).toBe(want.format);
        const mine = report.recipients.find((r) => r.address === values.recipient);
        expect(mine, JSON.stringify(report.recipients)).toBeDefined();
        expect(mine && classifyRecipient(mine, report.mta).reason).toBe(want.reason);
        expect(mine?.status).toBe(want.status);
        expect(report.originalMessageId).toBe(want.id ? values.messageId : null);
      }
      if (report.type === 'complaint') {
        expect(report).toEqual({
          type: 'complaint',
          feedbackType: 'abuse',
          address: values.recipient,
          originalMessageId: values.messageId,
          originalMailFrom: values.returnPath,
        });
      }
    });
  }

  it('a DSN keeps every recipient block: the delivered one is not a bounce', async () => {
    const report = await parseInboundMessage(inboundFixture('dsn-exchange-multi', values));
    expect(report.type === 'bounce' && report.recipients.map((r) => [r.address, r.action, r.class])).toEqual([
      ['someone.else@example.org', 'delivered', 'delivered'],
      [values.recipient, 'failed', 'hard'],
    ]);
  });

  it('keeps the diagnostic as one line', async () => {
    const report = await parseInboundMessage(inboundFixture('dsn-postfix-hard', values));
    expect(report.type === 'bounce' && report.recipients[0]?.diagnostic).toBe(
      `smtp; 550 5.1.1 <${values.recipient}>: Recipient address rejected: User unknown in virtual mailbox table`,
    );
  });

  it('reads garbage and a malformed MIME tree without throwing', async () => {
    const broken = Buffer.from(
      'Content-Type: multipart/report; report-type=delivery-status; boundary="x"\r\n\r\n--x\r\nContent-Type: message/delivery-status\r\n\r\n\u0000\u0001garbage\r\n--y--\r\n',
    );
    expect((await parseInboundMessage(broken)).type).toBe('unrecognised');
    expect((await parseInboundMessage(Buffer.from([0xff, 0xfe, 0x00, 0x0d]))).type).toBe('unrecognised');
  });
});
