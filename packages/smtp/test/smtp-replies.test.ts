import { composeFor, isMailroomError, type MailroomError } from '@mailroom/core';
import { smtpTransport } from '@mailroom/smtp';
import { afterEach, describe, expect, it } from 'vitest';
import {
  drop,
  type RawSmtpScript,
  type RawSmtpServer,
  silent,
  startRawSmtpServer,
} from '../../../test/support/raw-smtp-server.js';
import { makeMessage } from './fixtures.js';

const servers: RawSmtpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Sends one message to a server following `script`; returns the error and the server. */
async function failure(script: RawSmtpScript, options: { auth?: { user: string; pass: string } } = {}) {
  const server = await startRawSmtpServer(script);
  servers.push(server);
  const transport = smtpTransport({
    host: server.host,
    port: server.port,
    connectionTimeout: 1000,
    greetingTimeout: 300,
    socketTimeout: 300,
    ...options,
  });
  try {
    const outcome = await transport.send(composeFor(transport, makeMessage())).then(
      (receipt) => ({ receipt }),
      (error: unknown) => ({ error }),
    );
    if (!('error' in outcome)) throw new Error(`expected a failure, got ${JSON.stringify(outcome.receipt)}`);
    if (!isMailroomError(outcome.error)) throw new Error(`not a MailroomError: ${String(outcome.error)}`);
    return { error: outcome.error as MailroomError, server };
  } finally {
    await transport.close();
  }
}

const fields = (e: MailroomError) => ({
  code: e.code,
  retryable: e.retryable,
  responseCode: e.responseCode,
  command: e.command,
});

describe('smtpTransport: SMTP replies become transient or permanent errors', () => {
  it('421 at the greeting → transient, with the reply', async () => {
    const { error } = await failure({ GREETING: drop('421 4.3.2 Service not available, closing channel') });
    expect(fields(error)).toEqual({
      code: 'TRANSPORT_TRANSIENT',
      retryable: true,
      responseCode: 421,
      command: 'CONN',
    });
    expect(error.response).toBe('421 4.3.2 Service not available, closing channel');
    expect(error.cause).toBeInstanceOf(Error);
  });

  it.each([
    ['450 4.2.1 Mailbox busy, try later', 450],
    ['451 4.3.0 Local error in processing', 451],
    ['452 4.5.3 Too many recipients', 452],
  ])('%s on RCPT TO → transient', async (reply, responseCode) => {
    const { error, server } = await failure({ RCPT: reply });
    expect(fields(error)).toEqual({
      code: 'TRANSPORT_TRANSIENT',
      retryable: true,
      responseCode,
      command: 'RCPT TO',
    });
    expect(error.response).toBe(reply);
    expect(server.dataAttempts).toBe(0);
  });

  it('550 on RCPT TO → permanent', async () => {
    const { error, server } = await failure({
      RCPT: '550 5.1.1 <recipient@example.org>: Recipient address rejected',
    });
    expect(fields(error)).toEqual({
      code: 'TRANSPORT_PERMANENT',
      retryable: false,
      responseCode: 550,
      command: 'RCPT TO',
    });
    expect(error.response).toMatch(/^550 5\.1\.1/);
    expect(error.message).toMatch(/^\[smtp\] RCPT TO failed: 550 5\.1\.1/);
    expect(server.dataAttempts).toBe(0);
  });

  it('454 at MAIL FROM → transient', async () => {
    const { error } = await failure({ MAIL: '454 4.7.1 Relay access temporarily denied' });
    expect(fields(error)).toEqual({
      code: 'TRANSPORT_TRANSIENT',
      retryable: true,
      responseCode: 454,
      command: 'MAIL FROM',
    });
  });

  it('454 at AUTH → transient', async () => {
    const { error, server } = await failure(
      { AUTH: '454 4.7.0 Temporary authentication failure' },
      { auth: { user: 'user', pass: 'pass' } },
    );
    expect(fields(error)).toEqual({
      code: 'TRANSPORT_TRANSIENT',
      retryable: true,
      responseCode: 454,
      command: 'AUTH PLAIN',
    });
    expect(server.commands.some((c) => c.startsWith('MAIL FROM'))).toBe(false);
  });

  it.each([
    ['552 5.3.4 Message size exceeds fixed limit', 552],
    ['554 5.7.1 Message rejected as spam', 554],
  ])('%s after the final dot → permanent', async (reply, responseCode) => {
    const { error, server } = await failure({ '.': reply });
    expect(fields(error)).toEqual({
      code: 'TRANSPORT_PERMANENT',
      retryable: false,
      responseCode,
      command: 'DATA',
    });
    expect(error.response).toBe(reply);
    expect(server.messages).toHaveLength(1);
  });

  it('451 after the final dot → transient', async () => {
    const { error } = await failure({ '.': '451 4.3.0 Queue file write error' });
    expect(fields(error)).toEqual({
      code: 'TRANSPORT_TRANSIENT',
      retryable: true,
      responseCode: 451,
      command: 'DATA',
    });
  });

  it('a server that never greets → transient timeout', async () => {
    const started = Date.now();
    const { error } = await failure({ GREETING: silent() });
    expect(error.code).toBe('TRANSPORT_TRANSIENT');
    expect(error.responseCode).toBeUndefined();
    expect((error.cause as { code?: string }).code).toBe('ETIMEDOUT');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a server silent after the final dot → transient timeout, the message sent once', async () => {
    const { error, server } = await failure({ '.': silent() });
    expect(error.code).toBe('TRANSPORT_TRANSIENT');
    expect((error.cause as { code?: string }).code).toBe('ETIMEDOUT');
    expect(server.dataAttempts).toBe(1);
  });

  it('a connection dropped after the final dot, before the 250 → transient, and not sent again', async () => {
    const { error, server } = await failure({ '.': drop() });
    expect(error.code).toBe('TRANSPORT_TRANSIENT');
    expect(error.responseCode).toBeUndefined();
    expect((error.cause as { code?: string }).code).toBe('ECONNECTION');
    // The server may hold the message: only the worker decides to send it again.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server.dataAttempts).toBe(1);
    expect(server.connections).toBe(1);
  });

  it('a connection dropped before the greeting → transient, after at most one more connection', async () => {
    const { error, server } = await failure({ GREETING: drop() });
    expect(error.code).toBe('TRANSPORT_TRANSIENT');
    expect(server.connections).toBeLessThanOrEqual(2);
    expect(server.dataAttempts).toBe(0);
  });

  it('a refused connection → transient', async () => {
    const closed = await startRawSmtpServer();
    const port = closed.port;
    await closed.close();
    const transport = smtpTransport({ host: '127.0.0.1', port, connectionTimeout: 1000 });
    try {
      const error = await transport.send(composeFor(transport, makeMessage())).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'MailroomError', code: 'TRANSPORT_TRANSIENT', retryable: true });
      expect((error as MailroomError).responseCode).toBeUndefined();
      await expect(transport.verify()).rejects.toMatchObject({ code: 'TRANSPORT_TRANSIENT' });
    } finally {
      await transport.close();
    }
  });

  it('a relay that closes each connection after one message: every send still succeeds, each sent once', async () => {
    const server = await startRawSmtpServer({ '.': drop('250 2.0.0 Ok: queued, bye') });
    servers.push(server);
    const transport = smtpTransport({ host: server.host, port: server.port, maxConnections: 1 });
    try {
      for (let i = 0; i < 4; i++) {
        const receipt = await transport.send(composeFor(transport, makeMessage()));
        expect(receipt.response).toBe('250 2.0.0 Ok: queued, bye');
      }
    } finally {
      await transport.close();
    }
    expect(server.dataAttempts).toBe(4);
    expect(server.messages).toHaveLength(4);
  });

  it('a 250 with a multi-line reply is the receipt response', async () => {
    const server = await startRawSmtpServer({ '.': '250-2.0.0 Ok\r\n250 2.0.0 queued as ABC123' });
    servers.push(server);
    const transport = smtpTransport({ host: server.host, port: server.port });
    try {
      const message = makeMessage();
      const receipt = await transport.send(composeFor(transport, message));
      expect(receipt.messageId).toBe(message.messageId);
      expect(receipt.accepted).toEqual(['recipient@example.org']);
      expect(receipt.response).toMatch(/queued as ABC123/);
    } finally {
      await transport.close();
    }
  });
});
