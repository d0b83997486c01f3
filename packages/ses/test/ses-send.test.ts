import { generateKeyPairSync } from 'node:crypto';
import { composeFor, MailroomError } from '@mailroom/core';
import { type SesTransport, sesTransport } from '@mailroom/ses';
import { smtpTransport } from '@mailroom/smtp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ConnectionLog, isLoopback, logConnections } from '../../../test/support/connection-log.js';
import { freePort } from '../../../test/support/free-port.js';
import {
  SES_TEST_CREDENTIALS,
  type SesEmulator,
  startSesEmulator,
} from '../../../test/support/ses-emulator.js';
import { startSmtpSink } from '../../../test/support/smtp-sink.js';
import { INVITATION, makeMessage } from '../../smtp/test/fixtures.js';

let ses: SesEmulator;
let transport: SesTransport;
let connections: ConnectionLog;

beforeAll(async () => {
  connections = logConnections();
  ses = await startSesEmulator();
  transport = sesTransport({
    region: 'us-east-1',
    endpoint: ses.endpoint,
    credentials: SES_TEST_CREDENTIALS,
    configurationSetName: 'mailroom-events',
  });
});
afterAll(async () => {
  await transport.close();
  await ses.close();
  connections.stop();
  // The SDK went nowhere but the loopback: no AWS endpoint, no instance-metadata lookup.
  expect(connections.hosts).toContain('127.0.0.1');
  expect(connections.hosts.filter((host) => !isLoopback(host))).toEqual([]);
});
beforeEach(() => ses.fault(undefined));

describe('sesTransport: sending', () => {
  it("records SES's MessageId as the provider id, sends to the one recipient with the configuration set", async () => {
    const message = makeMessage({ to: { address: 'ann@example.org', name: 'Ann' } });
    const receipt = await transport.send(composeFor(transport, message));
    const sent = ses.sent.at(-1);
    expect(sent?.parsed.messageId).toBe(message.messageId);
    expect(receipt).toMatchObject({
      messageId: message.messageId,
      accepted: ['ann@example.org'],
      rejected: [],
      transport: 'ses',
      providerMessageId: sent?.sesMessageId,
      response: `250 Ok ${sent?.sesMessageId}`,
    });
    expect(sent?.request).toMatchObject({
      ConfigurationSetName: 'mailroom-events',
      Destination: { ToAddresses: ['ann@example.org'] },
    });
    // The emulator keeps it under the same id.
    expect((await ses.store()).map((e) => e.messageId)).toContain(receipt.providerMessageId);
  });

  it('sends the bytes the SMTP transport sends (one composer), calendar and attachments included', async () => {
    const sink = await startSmtpSink();
    const smtp = smtpTransport(sink.url);
    const message = makeMessage({
      subject: 'Réunion — ordre du jour',
      html: '<p>Bonjour</p>',
      headers: { 'List-Unsubscribe': '<https://example.com/u/1>' },
      attachments: [
        { filename: 'a.bin', contentType: 'application/octet-stream', content: Uint8Array.of(0, 1, 2, 255) },
      ],
      calendar: { method: 'REQUEST', content: INVITATION, filename: 'invite.ics' },
    });
    await smtp.send(composeFor(smtp, message));
    await transport.send(composeFor(transport, message));
    // Only the Date and the builders' random boundary prefixes may differ.
    const same = (raw: Buffer) =>
      raw
        .toString('latin1')
        .replace(/^Date: .*\r\n/m, '')
        .replace(/=_mr[0-9a-f]+/g, '=_mr');
    expect(same(ses.sent.at(-1)?.raw as Buffer)).toBe(same(sink.messages[0]?.raw as Buffer));
    await smtp.close();
    await sink.close();
  });

  it('signs with the sender identity key when there is one, else leaves DKIM to SES; dkim: false never signs', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const dkim = {
      domain: 'example.com',
      selector: 'mr1',
      privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    };
    await transport.send(composeFor(transport, makeMessage({ dkim })));
    expect(ses.sent.at(-1)?.parsed.headers.get('dkim-signature')).toBeDefined();
    await transport.send(composeFor(transport, makeMessage()));
    expect(ses.sent.at(-1)?.parsed.headers.get('dkim-signature')).toBeUndefined();
    const unsigned = sesTransport({
      region: 'us-east-1',
      endpoint: ses.endpoint,
      credentials: SES_TEST_CREDENTIALS,
      dkim: false,
    });
    expect(unsigned.capabilities.dkim).toBe(false);
    await unsigned.send(composeFor(unsigned, makeMessage({ dkim })));
    expect(ses.sent.at(-1)?.parsed.headers.get('dkim-signature')).toBeUndefined();
    await unsigned.close();
  });

  it('send hands the given bytes over as they are (sendRaw: its deprecated alias)', async () => {
    const raw = Buffer.from(
      'From: a@example.com\r\nTo: b@example.org\r\nSubject: Raw\r\nMessage-ID: <raw-1@mailroom.test>\r\n\r\nBody\r\n',
    );
    expect(transport.sendRaw).toBe(transport.send);
    await transport.send({
      messageId: '<raw-1@mailroom.test>',
      envelope: { from: 'a@example.com', to: ['b@example.org'] },
      raw,
    });
    expect(ses.sent.at(-1)?.raw.equals(raw)).toBe(true);
  });
});

describe('sesTransport: errors', () => {
  const cases: Array<[string, number, string, string, string | undefined]> = [
    ['throttled', 429, 'TooManyRequestsException', 'TRANSPORT_TRANSIENT', 'slow-down'],
    ['over the sending quota', 400, 'LimitExceededException', 'TRANSPORT_TRANSIENT', 'slow-down'],
    ['rejected content', 400, 'MessageRejected', 'TRANSPORT_PERMANENT', undefined],
    [
      'an unverified MAIL FROM domain',
      400,
      'MailFromDomainNotVerifiedException',
      'TRANSPORT_PERMANENT',
      undefined,
    ],
    ['a paused account', 400, 'SendingPausedException', 'TRANSPORT_TRANSIENT', 'pause'],
    ['a paused account (v1 name)', 400, 'AccountSendingPausedException', 'TRANSPORT_TRANSIENT', 'pause'],
    ['a failure inside SES', 500, 'InternalServiceErrorException', 'TRANSPORT_TRANSIENT', undefined],
    ['an unknown configuration set', 404, 'NotFoundException', 'TRANSPORT_TRANSIENT', undefined],
  ];
  it.each(cases)(
    '%s (%i %s) → %s, backpressure %s, one request only',
    async (_, status, type, code, pressure) => {
      ses.fault(() => ({ status, type, message: `${type} for the test` }));
      const before = ses.requests;
      const error = await transport.send(composeFor(transport, makeMessage())).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MailroomError);
      expect(error).toMatchObject({ code, response: `${type}: ${type} for the test` });
      expect((error as MailroomError).backpressure).toBe(pressure);
      expect((error as MailroomError).message).toMatch(/^\[ses\] /);
      // The SDK's own retries are off: the worker owns retries.
      expect(ses.requests - before).toBe(1);
    },
  );

  it('a refused connection is transient, and verify says the endpoint cannot be reached', async () => {
    const port = await freePort();
    const down = sesTransport({
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${port}`,
      credentials: SES_TEST_CREDENTIALS,
    });
    await expect(down.send(composeFor(down, makeMessage()))).rejects.toMatchObject({
      code: 'TRANSPORT_TRANSIENT',
      message: expect.stringMatching(/ECONNREFUSED/),
    });
    await expect(down.verify()).rejects.toMatchObject({ code: 'TRANSPORT_TRANSIENT' });
    await down.close();
  });

  it('verify passes against a reachable endpoint', async () => {
    await expect(transport.verify()).resolves.toBeUndefined();
  });
});
