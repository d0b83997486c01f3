import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqlStore } from '@mailroom/sql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningCli, startCli as start, waitForOutput } from './support/cli-harness.js';
import { startCountingSink } from './support/crash-sink.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const RECIPIENTS = 5_000;
/** How long the receiver answers 500 before it recovers (the minute, scaled with the schedule). */
const DOWN_MS = 3_000;

/**
 * End to end with `mailroom serve` on a real SMTP sink: `mailroom webhook add` an endpoint subscribed to
 * `email.sent`, a 5,000-recipient broadcast over HTTP, a receiver that answers 500 for a while and then
 * 200: every recipient's `email.sent` arrives, verified with `standardwebhooks`, once per webhook-id, and
 * the failed attempts are recorded.
 */
describe('webhooks through mailroom serve', () => {
  let dir: string;
  let db: string;
  let receiver: WebhookReceiver;
  const running: RunningCli[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-webhooks-'));
    db = join(dir, 'mailroom.db');
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

  async function run(argv: string[]): Promise<string> {
    const cli = start(dir, [...argv, '--database', db]);
    const code = await cli.done;
    expect(code, cli.err).toBe(0);
    return cli.out;
  }

  /** `mailroom webhook add --json` of the receiver (allow-listed), with `extra` flags. */
  async function addWebhook(
    projectId: string,
    extra: string[] = [],
  ): Promise<{ webhook: { id: string }; secret: string }> {
    const argv = ['webhook', 'add', '--project', projectId, '--url', receiver.url, ...extra];
    return JSON.parse(await run([...argv, '--allow-host', receiver.host, '--json']));
  }

  it(`delivers one verified email.sent per recipient of a ${RECIPIENTS}-recipient broadcast, through retries`, {
    timeout: 120_000,
  }, async () => {
    const sink = await startCountingSink();
    try {
      const { project, secret } = JSON.parse(await run(['project', 'create', 'Acme', '--json'])) as {
        project: { id: string };
        secret: string;
      };
      await run(['sender', 'add', '--project', project.id, 'news@acme.test']);
      // Refused when added: loopback without --allow-host, a private and a metadata address.
      for (const url of [receiver.url, 'http://10.0.0.7/hook', 'http://169.254.169.254/latest']) {
        const refused = start(dir, [
          'webhook',
          'add',
          '--project',
          project.id,
          '--url',
          url,
          '--database',
          db,
        ]);
        expect(await refused.done).toBe(1);
        expect(refused.err).toMatch(/[Rr]efused/);
      }
      const added = await addWebhook(project.id, ['--events', 'email.sent']);
      expect(added.secret).toMatch(/^whsec_/);
      receiver.secret = added.secret;
      const listed = await run(['webhook', 'list', '--project', project.id]);
      expect(listed).toContain(added.webhook.id);
      expect(listed).not.toContain(added.secret);

      // Down for DOWN_MS from the first POST it gets (not from now: on a loaded machine serve may take
      // longer than that to start and send its first event, and then nothing would ever be retried).
      let downUntil: number | undefined;
      receiver.respond = () => {
        downUntil ??= Date.now() + DOWN_MS;
        return Date.now() < downUntil ? 500 : 200;
      };
      const cli = start(dir, [
        'serve',
        '--port',
        '0',
        '--database',
        db,
        '--smtp',
        `smtp://127.0.0.1:${sink.port}`,
        '--allow-host',
        receiver.host,
        '--webhook-retry-schedule',
        '250,500,1000,2000,2000,2000',
      ]);
      running.push(cli);
      const [, base] = await waitForOutput(cli, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
      const addresses = Array.from({ length: RECIPIENTS }, (_, i) => `r${i}@example.test`);
      let ref: string | undefined;
      for (let i = 0; i < RECIPIENTS; i += 250) {
        const recipients = addresses.slice(i, i + 250);
        const body = ref
          ? { broadcastRef: ref, recipients }
          : { subject: 'Hi', sender: 'news@acme.test', message: '<p>Hello</p>', recipients };
        const res = await fetch(`${base}/send/mail/broadcast`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        expect(res.status).toBe(200);
        ref ??= ((await res.json()) as { data: { broadcastRef: string } }).data.broadcastRef;
      }
      const delivered = () =>
        new Set(
          receiver.received
            .filter((r) => r.status === 200 && r.verified)
            .map((r) => String((r.payload.data.delivery as { address: string }).address)),
        );
      await receiver.waitFor(() => delivered().size >= RECIPIENTS, 90_000);
      await sink.waitFor(RECIPIENTS, 10_000);

      expect(receiver.received.every((r) => r.verified)).toBe(true);
      expect(receiver.received.every((r) => r.payload.type === 'email.sent')).toBe(true);
      expect([...delivered()].sort()).toEqual([...addresses].sort());
      // Exactly one webhook-id per recipient; a retry repeats it.
      const idsByAddress = new Map<string, Set<string>>();
      for (const r of receiver.received) {
        const address = String((r.payload.data.delivery as { address: string }).address);
        idsByAddress.set(address, (idsByAddress.get(address) ?? new Set()).add(r.id));
      }
      expect([...idsByAddress.values()].filter((ids) => ids.size !== 1)).toEqual([]);
      const failures = receiver.received.filter((r) => r.status === 500).length;
      expect(failures).toBeGreaterThan(0);

      cli.stop();
      expect(await cli.done).toBe(0);
      running.splice(0);
      const store = sqlStore({ url: db });
      try {
        const attempts = await store.listWebhookAttempts(project.id, { limit: 100_000 });
        expect(attempts.filter((a) => a.statusCode === 500)).toHaveLength(failures);
        expect(attempts.filter((a) => a.statusCode === 200).length).toBeGreaterThanOrEqual(RECIPIENTS);
      } finally {
        await store.close();
      }
      await run(['webhook', 'remove', '--project', project.id, added.webhook.id]);
      expect(await run(['webhook', 'list', '--project', project.id])).toContain('No webhook endpoints');
    } finally {
      await sink.close();
    }
  });

  it('webhook disable and enable switch an endpoint, and say which; an unknown id exits 1', async () => {
    const { project } = JSON.parse(await run(['project', 'create', 'Acme', '--json'])) as {
      project: { id: string };
    };
    const added = await addWebhook(project.id);
    const id = added.webhook.id;
    expect(await run(['webhook', 'disable', '--project', project.id, id])).toBe(
      `Disabled webhook ${id} -> ${receiver.url}.\n`,
    );
    expect(await run(['webhook', 'list', '--project', project.id])).toContain(
      'disabled (disabled by the user)',
    );
    const enabled = JSON.parse(await run(['webhook', 'enable', '--project', project.id, id, '--json'])) as {
      id: string;
      enabled: boolean;
    };
    expect(enabled).toMatchObject({ id, enabled: true });
    expect(await run(['webhook', 'list', '--project', project.id])).toMatch(/ enabled\n$/);
    const unknown = start(dir, ['webhook', 'enable', '--project', project.id, 'wh_nope', '--database', db]);
    expect(await unknown.done).toBe(1);
    expect(unknown.err).toMatch(/^mailroom: .*not found/i);
    const help = start(dir, ['--help']);
    expect(await help.done).toBe(0);
    expect(help.out).toContain('webhook enable');
    expect(help.out).toContain('webhook disable');
  });

  it('--webhook-busy-rate takes a number of POSTs per second, 0 or more, and --help shows it', async () => {
    for (const value of ['-1', 'fast']) {
      const cli = start(dir, ['serve', '--database', db, '--port', '0', `--webhook-busy-rate=${value}`]);
      expect({ value, code: await cli.done }).toEqual({ value, code: 2 });
      expect(cli.err).toContain(
        `--webhook-busy-rate must be a number of POSTs per second, 0 or more, got '${value}'`,
      );
    }
    for (const command of ['serve', 'worker']) {
      const cli = start(dir, [command, '--help']);
      expect(await cli.done).toBe(0);
      expect(cli.out).toContain('--webhook-busy-rate N');
    }
  });
});
