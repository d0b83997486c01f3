import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type RunningCli, startCli as start, waitForOutput } from './support/cli-harness.js';
import { startSmtpSink } from './support/smtp-sink.js';

/** A `mailroom` command running in-process, with its output so far and its shutdown trigger. */

const emlFiles = (dir: string): string[] => {
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.eml'));
  } catch {
    return [];
  }
};

async function post(url: string, secret: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

describe('mailroom serve', () => {
  let dir: string;
  let db: string;
  let outbox: string;
  const running: RunningCli[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-serve-'));
    db = join(dir, 'serve.db');
    outbox = join(dir, 'outbox');
  });

  afterEach(async () => {
    for (const cli of running.splice(0)) {
      cli.stop();
      await cli.done;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  function serve(argv: string[], env: Record<string, string> = {}): RunningCli {
    const cli = start(dir, ['serve', '--port', '0', '--database', db, '--outbox', outbox, ...argv], env);
    running.push(cli);
    return cli;
  }

  it('creates the demo project, prints the curl line, delivers to the outbox and stops cleanly', async () => {
    const cli = serve([]);
    const [, base] = await waitForOutput(cli, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
    expect(base).not.toMatch(/:0$/);
    const [curl] = await waitForOutput(cli, /curl -s \S+ -H "Authorization: Bearer sk_live_[^"]+" [^\n]+/);
    expect(curl).toContain(`${base}/send/mail`);
    expect(cli.out).toContain(`lands in ${outbox} as an .eml file`);
    expect(cli.out.match(/sk_live_[\w-]+/g)?.length).toBe(2); // the secret line and the curl line
    const secret = /Bearer (sk_live_[\w-]+)/.exec(curl)?.[1] ?? '';
    const projectId = /demo project "Demo" \((prj_\w+)\)/.exec(cli.out)?.[1] ?? '';
    expect(projectId).not.toBe('');

    // The curl line's body, sent as curl would send it.
    const body = JSON.parse(/-d '([^']+)'/.exec(curl)?.[1] ?? 'null') as unknown;
    const sent = await post(`${base}/send/mail`, secret, body);
    expect(sent).toMatchObject({
      status: 200,
      json: { statusCode: 200, data: { ref: expect.stringMatching(/^msg_/) } },
    });
    await vi.waitFor(() => expect(emlFiles(outbox)).toHaveLength(1), { timeout: 20_000, interval: 100 });
    const eml = readFileSync(join(outbox, emlFiles(outbox)[0] ?? ''), 'utf8');
    expect(eml).toMatch(/^Subject: Hello Ada$/m);
    expect(eml).toMatch(/^From: Mailroom Demo <demo@mailroom\.local>$/m);

    // A 250-recipient broadcast, then a later batch by broadcastRef (through the SDK's misspelled alias).
    const recipients = Array.from({ length: 250 }, (_, i) => ({
      address: `member${i}@example.test`,
      name: `M${i} X`,
    }));
    const first = await post(`${base}/send/mail/broadcast`, secret, {
      subject: 'News for {{ recipient.firstName }}',
      sender: { address: 'demo@mailroom.local' },
      template: { ref: 'welcome' },
      recipients,
    });
    expect(first.status).toBe(200);
    const ref = (first.json as { data: { broadcast: { ref: string } } }).data.broadcast.ref;
    expect(ref).toMatch(/^bc_/);
    const later = await post(`${base}/send/mail/broadast`, secret, {
      broadcastRef: ref,
      recipients: [{ address: 'late@example.test' }, { address: 'member0@example.test' }],
    });
    expect(later).toMatchObject({ status: 200, json: { data: { broadcast: { ref }, broadcastRef: ref } } });

    // 1 message + 250 + 1 new address (member0 is already a recipient of the broadcast).
    await vi.waitFor(() => expect(emlFiles(outbox)).toHaveLength(252), { timeout: 60_000, interval: 250 });
    cli.stop();
    expect(await cli.done).toBe(0);
    running.splice(0);
    expect(cli.err).toContain('stopped');
    await expect(fetch(`${base}/health`)).rejects.toThrow();

    // The store was closed cleanly: the admin CLI reads the finished broadcast from the same file.
    const status = start(dir, [
      'broadcast',
      'status',
      '--project',
      projectId,
      ref,
      '--database',
      db,
      '--json',
    ]);
    expect(await status.done).toBe(0);
    expect(JSON.parse(status.out)).toMatchObject({ ref, counts: { sent: 251, queued: 0, failed: 0 } });
  });

  it('on later starts creates nothing and prints no secret', async () => {
    const first = serve([]);
    await waitForOutput(first, /curl -s/);
    first.stop();
    expect(await first.done).toBe(0);
    running.splice(0);

    const second = serve([], { PORT: '1' }); // --port 0 wins over PORT
    await waitForOutput(second, /listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(second.out).not.toMatch(/sk_(live|sandbox)_/);
    expect(second.out).not.toContain('curl');
    const projects = start(dir, ['project', 'list', '--database', db, '--json']);
    expect(await projects.done).toBe(0);
    expect(JSON.parse(projects.out)).toEqual([expect.objectContaining({ name: 'Demo' })]);
  });

  it('with --no-worker queues only, and `mailroom worker` delivers what was queued', async () => {
    const cli = serve(['--no-worker']);
    const [, base] = await waitForOutput(cli, /listening on (http:\/\/[\d.:]+)/);
    const [, secret] = await waitForOutput(cli, /Bearer (sk_live_[\w-]+)/);
    const sent = await post(`${base}/send/mail`, secret ?? '', {
      subject: 'Queued',
      sender: 'demo@mailroom.local',
      message: 'Hello {{ recipient.firstName }}',
      recipients: ['ada@example.test', 'bob@example.test'],
    });
    expect(sent.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(emlFiles(outbox)).toHaveLength(0);

    const worker = start(dir, ['worker', '--database', db, '--outbox', outbox, '--concurrency', '2']);
    running.push(worker);
    // A worker process renders on its main thread unless told otherwise (one worker per core, issue 42).
    await waitForOutput(worker, /Mailroom worker running .*concurrency 2, no render threads/);
    await vi.waitFor(() => expect(emlFiles(outbox)).toHaveLength(2), { timeout: 20_000, interval: 100 });
    worker.stop();
    expect(await worker.done).toBe(0);
  });

  it('delivers through the SMTP server from MAILROOM_SMTP_URL, verified at start', async () => {
    const sink = await startSmtpSink();
    try {
      const cli = start(dir, ['serve', '--port', '0', '--database', db], { MAILROOM_SMTP_URL: sink.url });
      running.push(cli);
      const [, base] = await waitForOutput(cli, /listening on (http:\/\/[\d.:]+)/);
      const [, secret] = await waitForOutput(cli, /Bearer (sk_live_[\w-]+)/);
      expect(cli.out).toContain(`delivery  smtp ${sink.url}`);
      const sent = await post(`${base}/send/mail`, secret ?? '', {
        subject: 'Via SMTP',
        sender: 'demo@mailroom.local',
        template: { ref: 'welcome' },
        recipients: [{ address: 'ada@example.test', name: 'Ada Lovelace' }],
      });
      expect(sent.status).toBe(200);
      const [message] = await sink.waitFor(1, 20_000);
      expect(message?.parsed.subject).toBe('Via SMTP');
      expect(emlFiles(join(dir, '.mailroom', 'outbox'))).toHaveLength(0);
      cli.stop();
      expect(await cli.done).toBe(0);
      running.splice(0);
    } finally {
      await sink.close();
    }
  });

  it('an unreachable SMTP server fails the start with exit 1 and a one-line error', async () => {
    for (const argv of [
      ['serve', '--port', '0', '--smtp', 'smtp://user:hunter2@127.0.0.1:1'],
      ['worker', '--smtp', 'smtp://127.0.0.1:1'],
    ]) {
      const cli = start(dir, [...argv, '--database', db]);
      expect(await cli.done).toBe(1);
      expect(cli.out).toBe('');
      expect(cli.err).toMatch(
        /^mailroom: cannot reach the SMTP server smtp:\/\/[^\n]*127\.0\.0\.1:1[^\n]*ECONNREFUSED[^\n]*\n$/,
      );
      expect(cli.err).not.toContain('hunter2');
    }
  });

  it('an unreachable database fails the start with exit 1 and a one-line error', async () => {
    const cli = start(dir, [
      'serve',
      '--port',
      '0',
      '--database',
      'postgres://127.0.0.1:1/x',
      '--outbox',
      outbox,
    ]);
    expect(await cli.done).toBe(1);
    expect(cli.err).toMatch(
      /^mailroom: cannot open the database postgres:\/\/127\.0\.0\.1:1\/x: [^\n]*ECONNREFUSED[^\n]*\n$/,
    );
  });
});
