import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeFor } from '@mailroom/core';
import { transportTestSuite } from '@mailroom/core/testing';
import { outboxTransport } from '@mailroom/smtp';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toReceivedMessage } from '../../../test/support/smtp-sink.js';
import { INVITATION, makeMessage } from './fixtures.js';

/** Every `.eml` file in `dir`, parsed. */
async function readOutbox(dir: string) {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.eml'));
  return Promise.all(names.map(async (name) => ({ name, raw: await readFile(join(dir, name)) })));
}

transportTestSuite('outbox', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mailroom-outbox-kit-'));
  const transport = outboxTransport({ dir });
  return {
    transport,
    received: async () =>
      Promise.all((await readOutbox(dir)).map(async ({ raw }) => toReceivedMessage(await simpleParser(raw)))),
    close: () => rm(dir, { recursive: true, force: true }),
  };
});

describe('outboxTransport', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'mailroom-outbox-'));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('creates the folder and writes one complete .eml per message, named by time and Message-ID', async () => {
    const dir = join(root, 'nested', 'outbox');
    const transport = outboxTransport({ dir });
    const message = makeMessage({
      messageId: '<abc.123/../../evil name@mail.example.com>',
      html: '<p>Hi</p>',
      calendar: { method: 'REQUEST', content: INVITATION, filename: 'invite.ics' },
    });
    const receipt = await transport.send(composeFor(transport, message));
    const files = await readOutbox(dir);
    expect(files).toHaveLength(1);
    const [file] = files;
    if (!file) throw new Error('no file');
    expect(file.name).toMatch(
      /^\d{8}T\d{9}Z-abc\.123_\.\._\.\._evil_name@mail\.example\.com-[0-9a-f]{8}\.eml$/,
    );
    expect(receipt).toEqual({
      messageId: message.messageId,
      accepted: ['recipient@example.org'],
      rejected: [],
      response: `250 written ${join(dir, file.name)}`,
    });
    const parsed = await simpleParser(file.raw);
    expect(parsed.messageId).toBe(message.messageId);
    expect(parsed.text?.trimEnd()).toBe(message.text);
    expect(parsed.html).toBe('<p>Hi</p>');
    expect(file.raw.toString('latin1')).toMatch(
      /Content-Type: text\/calendar; charset=utf-8; method=REQUEST/,
    );
    // Nothing left behind but the message.
    expect(await readdir(dir)).toEqual([file.name]);
  });

  it('writes the same Message-ID twice as two files (a retried delivery is a second send)', async () => {
    const dir = join(root, 'twice');
    const transport = outboxTransport({ dir, fsync: false });
    const message = makeMessage();
    // The second through `sendRaw`, the deprecated alias of `send`.
    await Promise.all([
      transport.send(composeFor(transport, message)),
      transport.sendRaw(composeFor(transport, message)),
    ]);
    expect(await readOutbox(dir)).toHaveLength(2);
  });

  it('declares its capabilities and verifies that the folder is writable', async () => {
    const transport = outboxTransport({ dir: join(root, 'verify') });
    expect(transport.name).toBe('outbox');
    expect(transport.capabilities).toEqual({ dkim: true, maxConcurrency: 8, textEncoding: 'base64' });
    await expect(transport.verify()).resolves.toBeUndefined();
    expect(await readdir(join(root, 'verify'))).toEqual([]);
  });

  it('fails transiently when the folder cannot be written, leaving no partial file', async () => {
    const blocker = join(root, 'blocker');
    await writeFile(blocker, 'a file where the folder should be');
    const transport = outboxTransport({ dir: join(blocker, 'outbox') });
    await expect(transport.send(composeFor(transport, makeMessage()))).rejects.toMatchObject({
      name: 'MailroomError',
      code: 'TRANSPORT_TRANSIENT',
      retryable: true,
    });
    await expect(transport.verify()).rejects.toMatchObject({ code: 'TRANSPORT_TRANSIENT' });

    const readOnly = join(root, 'read-only');
    const writable = outboxTransport({ dir: readOnly });
    await writable.verify();
    await chmod(readOnly, 0o500);
    try {
      // root ignores permissions: only assert where they apply.
      if (process.getuid?.() !== 0) {
        await expect(writable.send(composeFor(writable, makeMessage()))).rejects.toMatchObject({
          code: 'TRANSPORT_TRANSIENT',
        });
        expect(await readdir(readOnly)).toEqual([]);
      }
    } finally {
      await chmod(readOnly, 0o700);
    }
  });

  it('writes the bytes the SMTP transport would send, base64 for long HTML by default', async () => {
    const dir = join(root, 'encoding');
    const html = `<p>${'Long line with é. '.repeat(300)}</p>`;
    await outboxTransport({ dir }).send(composeFor(outboxTransport({ dir }), makeMessage({ html })));
    const [file] = await readOutbox(dir);
    expect(file?.raw.toString('latin1')).toMatch(
      /Content-Type: text\/html; charset=utf-8\r\nContent-Transfer-Encoding: base64/,
    );
  });
});
