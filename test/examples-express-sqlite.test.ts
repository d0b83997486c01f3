import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ExpressSqliteApp, start } from '../examples/express-sqlite/app.js';
import { startSmtpSink } from './support/smtp-sink.js';

const emlFiles = (dir: string): string[] => {
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.eml'));
  } catch {
    return [];
  }
};

async function sendReceipt(app: ExpressSqliteApp, secret: string): Promise<Response> {
  return fetch(`${app.url}/api/send/mail`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      subject: 'Receipt for {{ recipient.firstName }}',
      sender: 'hello@express.example',
      template: { ref: 'receipt', variables: { order: 'A-1001' } },
      recipients: [{ address: 'ada@example.test', name: 'Ada Lovelace' }],
    }),
  });
}

describe('example: express-sqlite', () => {
  const apps: ExpressSqliteApp[] = [];

  afterEach(async () => {
    for (const app of apps.splice(0)) await app.stop();
  });

  it('writes a message sent over HTTP to the outbox, and keeps the project across restarts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-express-'));
    const options = { port: 0, databaseFile: join(dir, 'app.db'), outboxDir: join(dir, 'outbox') };
    const first = await start(options);
    apps.push(first);
    const secret = first.secret ?? '';
    expect(secret).toMatch(/^sk_live_/);

    const res = await sendReceipt(first, secret);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      statusCode: 200,
      data: { ref: expect.stringMatching(/^msg_/) },
    });
    await vi.waitFor(() => expect(emlFiles(options.outboxDir)).toHaveLength(1), { timeout: 10_000 });
    const eml = readFileSync(join(options.outboxDir, emlFiles(options.outboxDir)[0] ?? ''), 'utf8');
    expect(eml).toMatch(/^Subject: Receipt for Ada$/m);
    expect(eml).toMatch(/^To: Ada Lovelace <ada@example\.test>$/m);

    await first.stop();
    apps.splice(0);
    const second = await start(options);
    apps.push(second);
    expect(second.secret).toBeUndefined();
    expect((await sendReceipt(second, secret)).status).toBe(200);
    await vi.waitFor(() => expect(emlFiles(options.outboxDir)).toHaveLength(2), { timeout: 10_000 });
  });

  it('delivers through SMTP when given a URL', async () => {
    const sink = await startSmtpSink();
    try {
      const dir = mkdtempSync(join(tmpdir(), 'mailroom-express-'));
      const app = await start({ port: 0, databaseFile: join(dir, 'app.db'), smtpUrl: sink.url });
      apps.push(app);
      expect((await sendReceipt(app, app.secret ?? '')).status).toBe(200);
      const [message] = await sink.waitFor(1, 10_000);
      expect(message?.parsed.subject).toBe('Receipt for Ada');
      expect(message?.parsed.html).toContain('Order A-1001 is on its way.');
    } finally {
      for (const app of apps.splice(0)) await app.stop();
      await sink.close();
    }
  });
});
