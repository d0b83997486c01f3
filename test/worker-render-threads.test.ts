import { generateKeyPairSync } from 'node:crypto';
import { createMailroom, type Mailroom, resolveRenderThreads } from '@mailroom/core';
import { memoryStore } from '@mailroom/memory';
import { smtpTransport } from '@mailroom/smtp';
import { dkimVerify } from 'mailauth';
import { afterEach, describe, expect, it } from 'vitest';
import { type SmtpSink, startSmtpSink } from './support/smtp-sink.js';

const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const TXT = `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;
const resolver = async (name: string, type: string): Promise<string[][]> => {
  if (type === 'TXT' && name === 'sel._domainkey.acme.test') return [[TXT]];
  throw Object.assign(new Error(`no ${type} record for ${name}`), { code: 'ENOTFOUND' });
};

describe('render threads: recipients rendered and built off the main thread, sent with sendRaw', () => {
  let sink: SmtpSink;
  let mailroom: Mailroom;

  afterEach(async () => {
    await mailroom.close();
    await sink.close();
  });

  async function run(renderThreads: number) {
    sink = await startSmtpSink();
    mailroom = createMailroom({
      store: memoryStore(),
      transport: smtpTransport({ host: sink.host, port: sink.port }),
      worker: { renderThreads, flushMs: 10 },
      strictVariables: true,
    });
    const { project, secret } = await mailroom.admin.createProject({ name: 'Acme' });
    await mailroom.admin.addSender(project.id, {
      address: 'news@acme.test',
      name: 'Acme News',
      dkim: { selector: 'sel', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() },
    });
    const { ref } = await mailroom.broadcast(secret, {
      subject: 'Hello {{ recipient.firstName }} ({{ code }})',
      sender: 'news@acme.test',
      message: '<h1>News</h1><p>Hi {{ recipient.firstName }}, your code is {{ code }}.</p>',
      attachments: [{ name: 'note.txt', content: Buffer.from('per-mailing bytes').toString('base64') }],
      recipients: [
        ...Array.from({ length: 30 }, (_, i) => ({
          address: `u${i}@example.test`,
          name: `User${i} Test`,
          variables: { code: `C${i}` },
        })),
        // strictVariables: this one has no code, so its render fails and nothing is sent to it.
        { address: 'nocode@example.test' },
      ],
    });
    await mailroom.worker.drain();
    return { ref, secret };
  }

  it('sends the same messages as the main thread would, DKIM-signed, with per-recipient content', async () => {
    const { ref, secret } = await run(2);
    expect(sink.messages).toHaveLength(30);
    const got = sink.messages.find((m) => m.envelope.rcptTo[0] === 'u7@example.test');
    expect(got?.parsed.subject).toBe('Hello User7 (C7)');
    expect(got?.parsed.html).toContain('Hi User7, your code is C7.');
    expect(got?.parsed.text).toContain('Hi User7, your code is C7.');
    expect(got?.parsed.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([
      ['note.txt', 'per-mailing bytes'],
    ]);
    const verified = await dkimVerify(got?.raw as Buffer, { resolver, curTime: new Date() });
    expect(verified.results[0]?.status.result).toBe('pass');

    const deliveries = await mailroom.listDeliveries(secret, ref);
    const u7 = deliveries.find((d) => d.address === 'u7@example.test');
    expect(got?.parsed.messageId).toBe(u7?.messageId);
    expect(u7).toMatchObject({ status: 'sent', attempts: 1 });
    const failed = deliveries.find((d) => d.address === 'nocode@example.test');
    expect(failed?.status).toBe('failed');
    expect(failed?.lastError).toMatch(/code/);
  });

  it('renders the same text and HTML on the main thread', async () => {
    await run(0);
    const got = sink.messages.find((m) => m.envelope.rcptTo[0] === 'u7@example.test');
    expect(got?.parsed.subject).toBe('Hello User7 (C7)');
    expect(got?.parsed.text).toContain('Hi User7, your code is C7.');
  });
});

describe("renderThreads: 'auto' (the default)", () => {
  it('is one thread with two cores or more, none on one core; a number is taken as given', () => {
    expect(resolveRenderThreads(undefined, 1)).toBe(0);
    expect(resolveRenderThreads('auto', 1)).toBe(0);
    expect(resolveRenderThreads(undefined, 2)).toBe(1);
    expect(resolveRenderThreads('auto', 16)).toBe(1);
    expect(resolveRenderThreads(0, 16)).toBe(0);
    expect(resolveRenderThreads(3, 1)).toBe(3);
    expect(resolveRenderThreads(-2, 4)).toBe(0);
  });
});
