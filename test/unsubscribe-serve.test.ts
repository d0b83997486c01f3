import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningCli, startCli as start, waitForOutput } from './support/cli-harness.js';
import { type SmtpSink, startSmtpSink, toReceivedMessage } from './support/smtp-sink.js';

/**
 * `mailroom serve --public-url`: the base of the one-click unsubscribe links in broadcasts (by default the
 * address it listens on), with a secret kept in the database so links survive a restart.
 */

describe('mailroom serve --public-url', () => {
  let dir: string;
  let sink: SmtpSink;
  const running: RunningCli[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-serve-unsub-'));
    sink = await startSmtpSink();
  });

  afterEach(async () => {
    for (const cli of running.splice(0)) {
      cli.stop();
      await cli.done;
    }
    await sink.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function serve(argv: string[], env: Record<string, string> = {}): RunningCli {
    const cli = start(
      dir,
      ['serve', '--port', '0', '--database', join(dir, 'serve.db'), '--smtp', sink.url, ...argv],
      env,
    );
    running.push(cli);
    return cli;
  }

  async function stop(cli: RunningCli): Promise<void> {
    cli.stop();
    expect(await cli.done).toBe(0);
    running.splice(running.indexOf(cli), 1);
  }

  /** Sends a broadcast through the server and returns the List-Unsubscribe URL its message carried. */
  async function broadcastLink(base: string, secret: string, to: string): Promise<string> {
    const before = sink.messages.length;
    const res = await fetch(`${base}/send/mail/broadcast`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        subject: 'News',
        sender: 'demo@mailroom.local',
        message: 'Hello',
        recipients: [to],
      }),
    });
    expect(res.status).toBe(200);
    const messages = await sink.waitFor(before + 1, 20_000);
    const headers = toReceivedMessage((messages[before] as (typeof messages)[number]).parsed).headers;
    expect(headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    return /^<([^>]+)>$/.exec(headers['list-unsubscribe'] ?? '')?.[1] ?? '';
  }

  it('links point at --public-url, and work on this server', async () => {
    const cli = serve(['--public-url', 'https://mail.example.test/base/']);
    const [, base = ''] = await waitForOutput(cli, /listening on (http:\/\/[\d.:]+)/);
    const [, secret = ''] = await waitForOutput(cli, /Bearer (sk_live_[\w-]+)/);
    expect(cli.out).toContain('links     https://mail.example.test/base/unsubscribe/');
    const link = await broadcastLink(base, secret, 'ann@example.test');
    expect(link).toMatch(/^https:\/\/mail\.example\.test\/base\/unsubscribe\/[\w-]+\.[\w-]{43}$/);
    // A proxy would map https://mail.example.test/base to this server's root.
    const local = `${base}${new URL(link).pathname.slice('/base'.length)}`;
    const res = await fetch(local, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(res.status).toBe(200);
  });

  it('by default links point at the listening address, and survive a restart', async () => {
    const first = serve([]);
    const [, base = ''] = await waitForOutput(first, /listening on (http:\/\/[\d.:]+)/);
    const [, secret = ''] = await waitForOutput(first, /Bearer (sk_live_[\w-]+)/);
    const link = await broadcastLink(base, secret, 'bob@example.test');
    expect(link.startsWith(`${base}/unsubscribe/`)).toBe(true);
    await stop(first);

    const second = serve([]);
    const [, again = ''] = await waitForOutput(second, /listening on (http:\/\/[\d.:]+)/);
    const moved = `${again}${new URL(link).pathname}`;
    expect((await fetch(moved)).status).toBe(200);
    const res = await fetch(moved, {
      method: 'POST',
      body: new URLSearchParams({ 'List-Unsubscribe': 'One-Click' }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('unsubscribed');
    // A new link of the restarted server is signed with the same kept secret.
    const next = await broadcastLink(again, secret, 'cat@example.test');
    expect(next.startsWith(`${again}/unsubscribe/`)).toBe(true);
  });

  it('refuses a --public-url that is not an http(s) URL, and a short MAILROOM_UNSUBSCRIBE_SECRET', async () => {
    const bad = start(dir, [
      'serve',
      '--port',
      '0',
      '--database',
      join(dir, 'x.db'),
      '--public-url',
      'mail.example',
    ]);
    expect(await bad.done).not.toBe(0);
    expect(bad.err).toContain('--public-url');
    const short = start(dir, ['serve', '--port', '0', '--database', join(dir, 'x.db')], {
      MAILROOM_UNSUBSCRIBE_SECRET: 'short',
    });
    expect(await short.done).not.toBe(0);
    expect(short.err).toContain('MAILROOM_UNSUBSCRIBE_SECRET');
  });
});
