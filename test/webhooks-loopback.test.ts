import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqlStore } from '@mailroom/sql';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type RunningCli, startCli as start, waitForOutput } from './support/cli-harness.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/**
 * The first hour with a webhook on the developer's own machine (issue 29): `webhook add` of a loopback URL
 * says which flag lets it through; a `serve` started without that flag warns in its log, keeps the event
 * pending with the reason and retries it on the schedule, so that restarting with the flag delivers it.
 */
describe('a loopback webhook through the CLI', () => {
  let dir: string;
  let db: string;
  let outbox: string;
  let receiver: WebhookReceiver;
  const running: RunningCli[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-loopback-hook-'));
    db = join(dir, 'mailroom.db');
    outbox = join(dir, 'outbox');
    receiver = await startWebhookReceiver();
  });

  afterEach(async () => {
    for (const cli of running.splice(0)) {
      cli.stop();
      await cli.done;
    }
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
    const cli = start(dir, [...argv, '--database', db]);
    const code = await cli.done;
    return { code, out: cli.out, err: cli.err };
  }

  function serve(extra: string[]): RunningCli {
    const cli = start(dir, [
      'serve',
      '--port',
      '0',
      '--database',
      db,
      '--outbox',
      outbox,
      '--webhook-retry-schedule',
      '300,300,3000,3000,3000',
      ...extra,
    ]);
    running.push(cli);
    return cli;
  }

  it('add names --allow-host; serve without it warns and retries; with it the event arrives', async () => {
    const created = await run(['project', 'create', 'Acme', '--json']);
    const { project, secret } = JSON.parse(created.out) as { project: { id: string }; secret: string };
    expect((await run(['sender', 'add', '--project', project.id, 'news@acme.test'])).code).toBe(0);

    const hook = ['webhook', 'add', '--project', project.id, '--url', receiver.url, '--events', 'email.sent'];
    const refused = await run(hook);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`127.0.0.1 is loopback`);
    expect(refused.err).toContain(`--allow-host ${receiver.host}`);

    const added = await run([...hook, '--allow-host', receiver.host]);
    expect(added.code, added.err).toBe(0);
    // The sending process needs the flag too: said when the endpoint is added.
    expect(added.out).toContain(`mailroom serve --allow-host ${receiver.host}`);
    const endpointId = /Added webhook (wh_\w+)/.exec(added.out)?.[1] ?? '';
    receiver.secret = /whsec_\S+/.exec(added.out)?.[0];

    const first = serve([]);
    const [, base] = await waitForOutput(first, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
    const res = await fetch(`${base}/send/mail`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        subject: 'Hi',
        sender: 'news@acme.test',
        message: 'Hello',
        recipients: 'a@x.test',
      }),
    });
    expect(res.status).toBe(200);
    // A warning in the log naming the endpoint, the reason and the flag; once, not once per attempt.
    await vi.waitFor(
      () => {
        expect(first.err).toContain(endpointId);
        expect(first.err).toContain('127.0.0.1 is loopback');
        expect(first.err).toContain(`--allow-host ${receiver.host}`);
      },
      { timeout: 20_000, interval: 100 },
    );
    // The first attempt and both short retries are refused; the message stays pending (retried every
    // 3 s next), with the reason on each attempt.
    const store = sqlStore({ url: db });
    try {
      await vi.waitFor(
        async () => {
          const attempts = await store.listWebhookAttempts(project.id, { limit: 10 });
          expect(attempts.length).toBeGreaterThanOrEqual(3);
          for (const attempt of attempts) expect(attempt.error).toMatch(/is loopback/);
        },
        { timeout: 20_000, interval: 200 },
      );
      const [message] = await store.listWebhookMessages(project.id, { limit: 10 });
      expect(message?.status).toBe('pending');
    } finally {
      await store.close();
    }
    const warnings = first.err.split('\n').filter((line) => line.includes('is loopback'));
    expect(warnings).toHaveLength(1);
    expect(receiver.received).toEqual([]);
    first.stop();
    expect(await first.done).toBe(0);
    running.splice(0);

    // Restarted with the flag: the pending event goes out at its next attempt.
    serve(['--allow-host', receiver.host]);
    await receiver.waitFor((r) => r.some((w) => w.verified && w.payload.type === 'email.sent'), 90_000);
  }, 120_000);
});
