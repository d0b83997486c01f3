import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { smtpTransport } from '@mailroom/smtp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type BouncingRelay, startBouncingRelay } from './support/bouncing-relay.js';
import { type RunningCli, startCli, waitForOutput } from './support/cli-harness.js';
import { rawSmtpClient } from './support/smtp-client.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * Acceptance, as the README runs it: `mailroom serve --bounce-domain bounces.acme.test --inbound-port P`
 * delivers through a loopback relay that accepts everything and then mails reports back to each
 * message's envelope sender at the inbound port, as an MTA would.
 */

const DOMAIN = 'bounces.acme.test';

describe('bounces and complaints end to end (mailroom serve, loopback relay)', () => {
  let dir: string;
  let relay: BouncingRelay;
  let cli: RunningCli;
  let base = '';
  let secret = '';
  let projectId = '';
  let sender = '';
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-bounces-'));
    receiver = await startWebhookReceiver();
    relay = await startBouncingRelay({
      'hard@example.org': { fixture: 'dsn-postfix-hard' },
      'gone@example.org': { fixture: 'text-exim' },
      'angry@example.org': { fixture: 'arf-complaint' },
      'away@example.org': { fixture: 'auto-ooo' },
      'forged@example.org': {
        fixture: 'dsn-postfix-hard',
        returnPath: (from) => from.replace(/-([0-9a-f])/, (_m, c: string) => `-${c === 'a' ? 'b' : 'a'}`),
      },
      'relay@example.org': { fixture: 'dsn-postfix-hard', returnPath: () => 'postmaster@acme.test' },
    });
    cli = startCli(dir, [
      'serve',
      '--port',
      '0',
      '--database',
      join(dir, 'mailroom.db'),
      '--smtp',
      `smtp://127.0.0.1:${relay.port}`,
      '--bounce-domain',
      DOMAIN,
      '--inbound-port',
      '0',
      '--inbound-host',
      '127.0.0.1',
      '--allow-host',
      receiver.host,
      '--log-level',
      'warn',
    ]);
    [, base] = (await waitForOutput(cli, /listening on (http:\/\/127\.0\.0\.1:\d+)/)) as unknown as [
      string,
      string,
    ];
    const [, port] = await waitForOutput(cli, /inbound SMTP on 127\.0\.0\.1:(\d+)/);
    relay.inboundPort = Number(port);
    [, projectId] = (await waitForOutput(cli, /\((prj_[a-z0-9]+)\) with the sender/)) as unknown as [
      string,
      string,
    ];
    [secret = ''] = (await waitForOutput(cli, /sk_live_[\w-]+/)) as unknown as string[];
    [, sender] = (await waitForOutput(cli, /with the sender (\S+)/)) as unknown as [string, string];
    const add = startCli(dir, [
      'webhook',
      'add',
      '--project',
      projectId,
      '--url',
      receiver.url,
      '--events',
      'email.bounced,email.complained',
      '--allow-host',
      receiver.host,
      '--database',
      join(dir, 'mailroom.db'),
      '--json',
    ]);
    expect(await add.done).toBe(0);
    receiver.secret = (JSON.parse(add.out) as { secret: string }).secret;
  });

  afterAll(async () => {
    cli?.stop();
    await cli?.done;
    await relay?.close();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function broadcast(recipients: string[]): Promise<string> {
    const res = await fetch(`${base}/send/mail/broadcast`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ subject: 'News', sender, message: 'Hello {{ name }}', recipients }),
    });
    const json = (await res.json()) as { data?: { broadcastRef?: string } };
    expect(res.status, JSON.stringify(json)).toBe(200);
    return json.data?.broadcastRef ?? '';
  }

  async function counts(ref: string): Promise<Record<string, number>> {
    const status = startCli(dir, [
      'broadcast',
      'status',
      '--project',
      projectId,
      ref,
      '--json',
      '--database',
      join(dir, 'mailroom.db'),
    ]);
    expect(await status.done).toBe(0);
    return (JSON.parse(status.out) as { counts: Record<string, number> }).counts;
  }

  it('bounces, complaints, auto-replies, forged tokens and foreign recipients, then suppression', async () => {
    const everyone = [
      'hard@example.org',
      'gone@example.org',
      'angry@example.org',
      'away@example.org',
      'forged@example.org',
      'relay@example.org',
      'fine@example.org',
    ];
    const ref = await broadcast(everyone);
    await vi.waitFor(() => expect(relay.mailedBack).toHaveLength(6), { timeout: 20_000, interval: 50 });
    const reply = (r: string) => relay.mailedBack.find((m) => m.recipient === r)?.reply ?? '';
    // Every message went out with a VERP return path at the bounce domain.
    for (const m of relay.accepted)
      expect(m.mailFrom).toMatch(/^b\+dlv_[a-z0-9]+-[0-9a-f]{16}@bounces\.acme\.test$/);
    expect(reply('hard@example.org')).toMatch(/^250 .*applied/);
    expect(reply('gone@example.org')).toMatch(/^250 .*applied/);
    expect(reply('angry@example.org')).toMatch(/^250 .*applied/);
    expect(reply('away@example.org')).toMatch(/^250 .*ignored/);
    expect(reply('forged@example.org')).toMatch(/^250 .*ignored/);
    expect(reply('relay@example.org')).toMatch(/^550 /);
    await vi.waitFor(
      async () => expect(await counts(ref)).toMatchObject({ bounced: 2, complained: 1, sent: 4 }),
      {
        timeout: 10_000,
        interval: 100,
      },
    );

    // The app hears of it through its webhook, verified with standardwebhooks.
    await receiver.waitFor((r) => r.length >= 3, 20_000);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    const heard = receiver.received.map(
      (r) => `${r.payload.type} ${(r.payload.data.delivery as { address: string }).address}`,
    );
    expect(heard.sort()).toEqual([
      'email.bounced gone@example.org',
      'email.bounced hard@example.org',
      'email.complained angry@example.org',
    ]);

    // A later broadcast to them: the bounced and complaining addresses are suppressed, the others sent.
    const later = await broadcast(everyone);
    await vi.waitFor(async () => expect(await counts(later)).toMatchObject({ suppressed: 3, sent: 4 }), {
      timeout: 20_000,
      interval: 100,
    });
    expect(relay.accepted.filter((m) => m.recipient === 'hard@example.org')).toHaveLength(1);
    expect(cli.err).toContain('inbound SMTP: recipient outside the bounce domain refused');
    expect(cli.err).toContain('forged or edited return-path token');
  });
});

describe('mailroom inbound (standalone listener)', () => {
  it('listens for the bounce domain only, and stops on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-inbound-'));
    const db = join(dir, 'mailroom.db');
    try {
      const missing = startCli(dir, ['inbound', '--port', '0', '--database', db]);
      expect(await missing.done).not.toBe(0);
      expect(missing.err).toContain('--bounce-domain DOMAIN is required');
      const badRelay = startCli(dir, [
        'inbound',
        '--port',
        '0',
        '--bounce-domain',
        DOMAIN,
        '--database',
        db,
        '--inbound-trusted-relay',
        '10.0.0.0/40',
      ]);
      expect(await badRelay.done).toBe(2);
      expect(badRelay.err).toContain(
        "--inbound-trusted-relay: not an address or a network in CIDR notation: '10.0.0.0/40'",
      );
      const badRate = startCli(dir, [
        'inbound',
        '--port',
        '0',
        '--bounce-domain',
        DOMAIN,
        '--inbound-rate',
        '0',
      ]);
      expect(await badRate.done).toBe(2);
      expect(badRate.err).toContain('--inbound-rate');
      const cli = startCli(dir, [
        'inbound',
        '--port',
        '0',
        '--inbound-host',
        '127.0.0.1',
        '--bounce-domain',
        DOMAIN,
        '--database',
        db,
        '--inbound-max-connections-per-ip',
        '2',
        '--inbound-max-header-lines',
        '20',
        '--inbound-max-forged',
        '1',
      ]);
      const [, port] = await waitForOutput(cli, /inbound SMTP listening on 127\.0\.0\.1:(\d+)/);
      const client = smtpTransport({ host: '127.0.0.1', port: Number(port), ignoreTLS: true });
      const raw = Buffer.from('From: MAILER-DAEMON@mx.test\r\nSubject: failure notice\r\n\r\nhello\r\n');
      const taken = await client.send({
        messageId: '<a@b>',
        envelope: { from: '', to: [`b+dlv_x-0123456789abcdef@${DOMAIN}`] },
        raw,
      });
      expect(taken.response).toMatch(/^250 .*ignored/);
      // With --inbound-max-forged 1 that was this address's one forged token of the minute: the next is
      // refused at RCPT, before its data.
      const refused = await client
        .send({
          messageId: '<a@b>',
          envelope: { from: '', to: [`b+dlv_y-0123456789abcdef@${DOMAIN}`] },
          raw,
        })
        .catch((e: unknown) => e);
      expect(refused).toMatchObject({ responseCode: 550 });
      expect(String((refused as Error).message)).toMatch(/Return-path token not recognised/);
      await expect(
        client.send({ messageId: '<a@b>', envelope: { from: '', to: ['someone@example.org'] }, raw }),
      ).rejects.toMatchObject({ responseCode: 550 });
      // The abuse limits from their flags: 21 header lines are refused with 552 ...
      const flood = Buffer.from(`${'X-Flood: 1\r\n'.repeat(21)}\r\nhello\r\n`);
      await expect(
        client.send({ messageId: '<a@b>', envelope: { from: '', to: [`fbl@${DOMAIN}`] }, raw: flood }),
      ).rejects.toMatchObject({ responseCode: 552 });
      await client.close();
      // ... and a third connection from this address while two are held is refused with 421.
      const held = [await rawSmtpClient(Number(port)), await rawSmtpClient(Number(port))];
      for (const c of held) expect(c.greeting).toMatch(/^220/);
      const third = await rawSmtpClient(Number(port));
      expect(third.greeting).toMatch(/^421/);
      for (const c of [...held, third]) c.close();
      cli.stop();
      expect(await cli.done).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('mailroom worker --bounce-domain', () => {
  it('writes every message with its VERP Return-Path; the From header is the sender', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-verp-'));
    const db = join(dir, 'mailroom.db');
    const outbox = join(dir, 'outbox');
    try {
      const serve = startCli(dir, [
        'serve',
        '--port',
        '0',
        '--database',
        db,
        '--outbox',
        outbox,
        '--no-worker',
      ]);
      const [, base] = await waitForOutput(serve, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
      const [secret] = await waitForOutput(serve, /sk_live_[\w-]+/);
      const sender = (await waitForOutput(serve, /with the sender (\S+)/))[1] ?? '';
      const res = await fetch(`${base}/send/mail`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ subject: 'Hi', sender, message: 'Hello', recipients: 'ann@example.org' }),
      });
      expect(res.status).toBe(200);
      const worker = startCli(dir, [
        'worker',
        '--database',
        db,
        '--outbox',
        outbox,
        '--bounce-domain',
        DOMAIN,
      ]);
      const file = await vi.waitFor(
        () => {
          const found = readdirSync(outbox).find((f) => f.endsWith('.eml'));
          if (!found) throw new Error('no .eml yet');
          return readFileSync(join(outbox, found), 'utf8');
        },
        { timeout: 20_000, interval: 100 },
      );
      expect(file).toMatch(/^Return-Path: <b\+dlv_[a-z0-9]+-[0-9a-f]{16}@bounces\.acme\.test>\r\n/);
      expect(file).toMatch(new RegExp(`^From: .*${sender.replaceAll('.', '\\.')}`, 'm'));
      worker.stop();
      serve.stop();
      expect(await worker.done).toBe(0);
      expect(await serve.done).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
