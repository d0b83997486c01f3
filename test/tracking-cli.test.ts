import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type RunningCli, startCli, waitForOutput } from './support/cli-harness.js';

/** `mailroom serve --track-opens --track-clicks`: messages carry tracked links on the server's own URL. */

const emlFiles = (dir: string): string[] => {
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.eml'));
  } catch {
    return [];
  }
};

describe('mailroom serve with tracking flags', () => {
  let dir: string;
  const running: RunningCli[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-serve-track-'));
  });

  afterEach(async () => {
    for (const cli of running.splice(0)) {
      cli.stop();
      await cli.done;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  async function sendOne(flags: string[]): Promise<{ base: string; html: string; text: string }> {
    const outbox = join(dir, 'outbox');
    const cli = startCli(dir, [
      'serve',
      '--port',
      '0',
      '--database',
      join(dir, 'db.sqlite'),
      '--outbox',
      outbox,
      ...flags,
    ]);
    running.push(cli);
    const [, base] = await waitForOutput(cli, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
    const [, secret] = await waitForOutput(cli, /Bearer (sk_live_[\w-]+)/);
    const res = await fetch(`${base}/send/mail`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        subject: 'Hi',
        sender: 'demo@mailroom.local',
        message: '<html><body><p>Read <a href="https://example.test/news?a=1">the news</a></p></body></html>',
        recipients: 'ann@example.test',
      }),
    });
    expect(res.status).toBe(200);
    await vi.waitFor(() => expect(emlFiles(outbox)).toHaveLength(1), { timeout: 20_000, interval: 100 });
    const parsed = await simpleParser(readFileSync(join(outbox, emlFiles(outbox)[0] ?? '')));
    return { base: base as string, html: String(parsed.html), text: String(parsed.text) };
  }

  it('rewrites links and adds the pixel on the server’s URL; the link redirects to the original', async () => {
    const { base, html, text } = await sendOne(['--track-opens', '--track-clicks']);
    const link = /href="([^"]+)"/.exec(html)?.[1] ?? '';
    expect(link.startsWith(`${base}/t/c/`)).toBe(true);
    expect(html).toMatch(new RegExp(`<img src="${base}/t/o/[^"]+\\.gif"`));
    expect(text).toContain('https://example.test/news?a=1');
    const res = await fetch(link, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://example.test/news?a=1');
  });

  it('tracks nothing without the flags', async () => {
    const { html } = await sendOne([]);
    expect(html).toContain('href="https://example.test/news?a=1"');
    expect(html).not.toContain('/t/o/');
  });
});
