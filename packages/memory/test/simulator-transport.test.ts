import { composeFor, createMailroom, type OutgoingMessage } from '@mailroom/core';
import { transportTestSuite } from '@mailroom/core/testing';
import { memoryStore, SIMULATOR_DOMAIN, simulatorTransport } from '@mailroom/memory';
import { type ParsedMail, simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { outboxReceived } from './outbox-received.js';

const at = (local: string) => `${local}@${SIMULATOR_DOMAIN}`;

function message(to: string, overrides: Partial<OutgoingMessage> = {}): OutgoingMessage {
  return {
    messageId: `<${Math.random().toString(36).slice(2)}@acme.test>`,
    from: { address: 'news@acme.test', name: 'Zoë from Acme' },
    to: { address: to, name: '' },
    subject: 'Grüße',
    text: 'Hello',
    attachments: [],
    headers: { 'List-Unsubscribe': '<https://acme.test/u/1>' },
    ...overrides,
  };
}

/**
 * The parts of a multipart/report, each with its headers parsed by mailparser and its body as sent
 * (mailparser folds some parts into `text` and makes others attachments).
 */
async function reportParts(
  raw: Uint8Array,
): Promise<Array<{ headers: ParsedMail['headers']; text: string }>> {
  const text = Buffer.from(raw).toString('latin1');
  const boundary = /boundary="([^"]+)"/.exec(text)?.[1] ?? '';
  const entities = text.split(`--${boundary}`).slice(1, -1);
  return Promise.all(
    entities.map(async (entity) => {
      const part = entity.replace(/^\r\n/, '');
      const split = part.indexOf('\r\n\r\n');
      const parsed = await simpleParser(Buffer.from(part.slice(0, split + 4), 'latin1'));
      return { headers: parsed.headers, text: part.slice(split + 4) };
    }),
  );
}

/** `Name: value` fields of a report part's body (both blocks: per message and per recipient). */
function fields(part: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of part.split(/\r?\n/)) {
    const match = /^([A-Za-z-]+):\s*(.*)$/.exec(line);
    if (match) out[(match[1] as string).toLowerCase()] = match[2] as string;
  }
  return out;
}

describe('simulatorTransport: the outcomes', () => {
  it('accepts ordinary addresses into the outbox, like memoryTransport', async () => {
    const transport = simulatorTransport();
    const receipt = await transport.send(composeFor(transport, message('ann@example.org')));
    expect(receipt).toMatchObject({ accepted: ['ann@example.org'], rejected: [] });
    expect(transport.lastMessageTo('ann@example.org')?.subject).toBe('Grüße');
    expect(transport.reports).toEqual([]);
  });

  it('bounce@ is refused at once with a 550 5.1.1 to RCPT TO, and never reaches the outbox', async () => {
    const transport = simulatorTransport();
    await expect(transport.send(composeFor(transport, message(at('bounce+7'))))).rejects.toMatchObject({
      code: 'TRANSPORT_PERMANENT',
      responseCode: 550,
      command: 'RCPT TO',
      response: expect.stringMatching(/^550 5\.1\.1 /),
    });
    expect(transport.outbox).toHaveLength(0);
  });

  it('soft@ answers 451 twice for a message, then accepts it', async () => {
    const transport = simulatorTransport();
    const m = message(at('soft'));
    for (let i = 0; i < 2; i++) {
      await expect(transport.send(composeFor(transport, m))).rejects.toMatchObject({
        code: 'TRANSPORT_TRANSIENT',
        responseCode: 451,
      });
    }
    await expect(transport.send(composeFor(transport, m))).resolves.toMatchObject({ accepted: [at('soft')] });
    // Another message to the same address gets its own two refusals.
    await expect(transport.send(composeFor(transport, message(at('soft'))))).rejects.toMatchObject({
      responseCode: 451,
    });
  });

  it('slow@ takes 2 s', async () => {
    const transport = simulatorTransport();
    const started = performance.now();
    await transport.send(composeFor(transport, message(at('slow'))));
    expect(performance.now() - started).toBeGreaterThanOrEqual(1990);
    expect(transport.outbox).toHaveLength(1);
  });

  it('async-bounce@ is accepted, then a DSN (RFC 3464) is mailed back to the sender through onInbound', async () => {
    const inbound: Uint8Array[] = [];
    const transport = simulatorTransport({ onInbound: (raw) => void inbound.push(raw), reportDelayMs: 20 });
    const sent = message(at('async-bounce'));
    await transport.send(composeFor(transport, sent));
    expect(transport.outbox).toHaveLength(1);
    expect(inbound).toHaveLength(0);
    await transport.settled();
    expect(inbound).toHaveLength(1);
    expect(transport.reports[0]).toMatchObject({
      kind: 'dsn',
      messageId: sent.messageId,
      state: 'delivered',
      // A bounce comes from the null sender, to the message's return path.
      envelope: { envelopeTo: ['news@acme.test'], envelopeFrom: '' },
    });

    const dsn = await simpleParser(Buffer.from(inbound[0] as Uint8Array));
    expect(dsn.headers.get('content-type')).toMatchObject({
      value: 'multipart/report',
      params: { 'report-type': 'delivery-status' },
    });
    expect(dsn.to && !Array.isArray(dsn.to) ? dsn.to.value[0]?.address : '').toBe('news@acme.test');
    expect(dsn.headers.get('auto-submitted')).toBe('auto-replied');
    const [human, status, returned] = await reportParts(inbound[0] as Uint8Array);
    expect(human?.headers.get('content-type')).toMatchObject({ value: 'text/plain' });
    expect(status?.headers.get('content-type')).toMatchObject({ value: 'message/delivery-status' });
    expect(fields(status?.text ?? '')).toMatchObject({
      'reporting-mta': `dns; ${SIMULATOR_DOMAIN}`,
      'final-recipient': `rfc822; ${at('async-bounce')}`,
      action: 'failed',
      status: '5.1.1',
      'diagnostic-code': expect.stringMatching(/^smtp; 550 5\.1\.1 /),
    });
    // The returned headers name the original message.
    expect(returned?.headers.get('content-type')).toMatchObject({ value: 'text/rfc822-headers' });
    const original = await simpleParser(Buffer.from(returned?.text ?? ''));
    expect(original.messageId).toBe(sent.messageId);
    expect(original.subject).toBe('Grüße');
  });

  it('complaint@ is accepted, then an ARF report (RFC 5965) is mailed back through onInbound', async () => {
    const inbound: Uint8Array[] = [];
    const transport = simulatorTransport({ reportDelayMs: 10 });
    // The hook can be wired after the transport was made (as the engine does).
    transport.onInbound = async (raw) => {
      inbound.push(raw);
    };
    const sent = message(at('complaint'));
    await transport.send(composeFor(transport, sent));
    await transport.settled();
    expect(inbound).toHaveLength(1);
    const arf = await simpleParser(Buffer.from(inbound[0] as Uint8Array));
    expect(arf.headers.get('content-type')).toMatchObject({
      value: 'multipart/report',
      params: { 'report-type': 'feedback-report' },
    });
    const [, feedback, returned] = await reportParts(inbound[0] as Uint8Array);
    expect(feedback?.headers.get('content-type')).toMatchObject({ value: 'message/feedback-report' });
    expect(fields(feedback?.text ?? '')).toMatchObject({
      'feedback-type': 'abuse',
      version: '1',
      'user-agent': expect.any(String),
      'original-mail-from': '<news@acme.test>',
      'original-rcpt-to': `<${at('complaint')}>`,
      'reported-domain': 'acme.test',
    });
    expect((await simpleParser(Buffer.from(returned?.text ?? ''))).messageId).toBe(sent.messageId);
  });

  it('reports go to the envelope sender when the engine set one (a VERP return path)', async () => {
    const envelopes: unknown[] = [];
    const transport = simulatorTransport({
      reportDelayMs: 1,
      onInbound: (_, envelope) => void envelopes.push(envelope),
    });
    const verp = 'b+dlv_1-abc@bounces.acme.test';
    await transport.send(
      composeFor(transport, { ...message(at('complaint')), envelopeFrom: verp } as OutgoingMessage),
    );
    await transport.settled();
    expect(envelopes).toEqual([{ envelopeTo: [verp], envelopeFrom: `fbl@${SIMULATOR_DOMAIN}` }]);
    const [, feedback] = await reportParts(transport.reports[0]?.raw as Uint8Array);
    expect(fields(feedback?.text ?? '')['original-mail-from']).toBe(`<${verp}>`);
  });

  it('without a hook the reports are kept (skipped); a failing hook is recorded, never thrown at the sender', async () => {
    const bare = simulatorTransport({ reportDelayMs: 1 });
    await bare.send(composeFor(bare, message(at('async-bounce'))));
    await bare.settled();
    expect(bare.reports[0]?.state).toBe('skipped');
    const failing = simulatorTransport({
      reportDelayMs: 1,
      onInbound: () => {
        throw new Error('inbound down');
      },
    });
    await failing.send(composeFor(failing, message(at('complaint'))));
    await failing.settled();
    expect(failing.reports[0]).toMatchObject({ state: 'failed', error: new Error('inbound down') });
  });
});

describe('simulatorTransport through the engine (the README example)', () => {
  it('bounces, retries, and mails DSNs and complaints back to the engine', async () => {
    const transport = simulatorTransport({ reportDelayMs: 10 });
    const mailroom = createMailroom({
      store: memoryStore(),
      transport,
      bounces: { domain: 'bounces.acme.test' }, // any domain: the simulator's reports carry its VERP tokens
      worker: { retryBaseMs: 10, retryMaxMs: 20 },
    });
    transport.connect(mailroom); // DSNs and complaints go to mailroom.inbound.receive
    const { secret, project } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    const { ref } = await mailroom.broadcast(secret, {
      sender: 'news@acme.test',
      subject: 'News',
      message: 'Hello',
      recipients: [at('bounce'), at('soft'), at('async-bounce'), at('complaint'), 'ann@example.org'],
    });
    await mailroom.worker.drain();
    await transport.settled();
    const byAddress = new Map((await mailroom.listDeliveries(secret, ref)).map((d) => [d.address, d]));
    // A refusal at once ends as a DSN does: bounced (and suppressed).
    expect(byAddress.get(at('bounce'))).toMatchObject({ status: 'bounced', attempts: 1 });
    expect(byAddress.get(at('soft'))).toMatchObject({ status: 'sent', attempts: 3 });
    expect(byAddress.get(at('async-bounce'))?.status).toBe('bounced');
    expect(byAddress.get(at('complaint'))?.status).toBe('complained');
    expect(byAddress.get('ann@example.org')?.status).toBe('sent');
    expect(transport.reports.map((r) => [r.kind, r.state])).toEqual([
      ['dsn', 'delivered'],
      ['arf', 'delivered'],
    ]);
    await mailroom.close();
  });

  it('connect refuses an engine without a bounce domain, naming the option', async () => {
    const transport = simulatorTransport();
    const mailroom = createMailroom({ store: memoryStore(), transport });
    expect(() => transport.connect(mailroom)).toThrow(/createMailroom\(\{ bounces: \{ domain: /);
    await mailroom.close();
  });

  it('a hook wired by hand to an engine without a bounce domain records why the report was ignored', async () => {
    const transport = simulatorTransport({ reportDelayMs: 1 });
    const mailroom = createMailroom({ store: memoryStore(), transport });
    transport.onInbound = (raw, envelope) => mailroom.inbound.receive(raw, envelope);
    const { secret, project } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, { address: 'news@acme.test' });
    await mailroom.send(secret, {
      sender: 'news@acme.test',
      subject: 'S',
      message: 'm',
      recipients: at('async-bounce'),
    });
    await mailroom.worker.drain();
    await transport.settled();
    expect(transport.reports[0]).toMatchObject({ state: 'ignored' });
    expect(String(transport.reports[0]?.reason)).toContain('bounces: { domain');
    await mailroom.close();
  });
});

transportTestSuite('simulator', () => {
  const transport = simulatorTransport();
  // Ordinary addresses behave as in memoryTransport.
  return {
    transport,
    received: async () => outboxReceived(transport.outbox),
    close: () => transport.close(),
  };
});
