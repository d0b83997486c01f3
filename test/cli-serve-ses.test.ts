import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunningCli, startCli, waitForOutput } from './support/cli-harness.js';
import { type ConnectionLog, isLoopback, logConnections } from './support/connection-log.js';
import { SES_TEST_CREDENTIALS, type SesEmulator, startSesEmulator } from './support/ses-emulator.js';

describe('mailroom serve and worker on Amazon SES (aws-ses-v2-local on loopback)', () => {
  let ses: SesEmulator;
  let dir: string;
  const running: RunningCli[] = [];
  const saved = { ...process.env };
  let connections: ConnectionLog;

  beforeAll(async () => {
    connections = logConnections();
    ses = await startSesEmulator();
    // The CLI takes SES credentials from the AWS SDK's chain: here, dummy ones in the environment.
    process.env.AWS_ACCESS_KEY_ID = SES_TEST_CREDENTIALS.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = SES_TEST_CREDENTIALS.secretAccessKey;
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  });
  afterAll(async () => {
    for (const key of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
    await ses.close();
    connections.stop();
    // Credentials from the SDK's chain (the environment here) and the given endpoint: only loopback
    // traffic, no AWS endpoint and no instance-metadata lookup.
    expect(connections.hosts).toContain('127.0.0.1');
    expect(connections.hosts.filter((host) => !isLoopback(host))).toEqual([]);
  });
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-ses-'));
  });
  afterEach(async () => {
    for (const cli of running.splice(0)) {
      cli.stop();
      await cli.done;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  function start(argv: string[]): RunningCli {
    const cli = startCli(dir, argv);
    running.push(cli);
    return cli;
  }

  it('a broadcast through `mailroom serve --ses-region` arrives with its headers and personalization', async () => {
    const cli = start([
      'serve',
      '--port',
      '0',
      '--database',
      join(dir, 'ses.db'),
      '--ses-region',
      'us-east-1',
      '--ses-endpoint',
      ses.endpoint,
      '--ses-configuration-set',
      'mailroom-events',
      '--public-url',
      'https://mail.acme.test',
    ]);
    const [, base] = await waitForOutput(cli, /listening on (http:\/\/[\d.:]+)/);
    const [, secret] = await waitForOutput(cli, /Bearer (sk_live_[\w-]+)/);
    expect(cli.out).toContain(
      `delivery  ses us-east-1 at ${ses.endpoint}, configuration set mailroom-events`,
    );
    const before = ses.sent.length;
    const response = await fetch(`${base}/send/mail/broadcast`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        subject: 'Hello {{ recipient.firstName }}',
        sender: 'demo@mailroom.local',
        message: '<p>Dear {{ recipient.firstName }}, your code is {{ code }}.</p>',
        recipients: [
          { address: 'ada@example.test', name: 'Ada Lovelace', variables: { code: 'A-1' } },
          { address: 'grace@example.test', name: 'Grace Hopper', variables: { code: 'G-2' } },
        ],
      }),
    });
    expect(response.status).toBe(200);
    const sent = (await ses.waitFor(before + 2, 20_000)).slice(before);
    const byAddress = new Map(sent.map((s) => [s.request.Destination?.ToAddresses?.[0], s]));
    for (const [address, first, code] of [
      ['ada@example.test', 'Ada', 'A-1'],
      ['grace@example.test', 'Grace', 'G-2'],
    ] as const) {
      const got = byAddress.get(address);
      expect(got, address).toBeDefined();
      const parsed = got?.parsed;
      expect(parsed?.subject).toBe(`Hello ${first}`);
      expect(parsed?.html).toContain(`Dear ${first}, your code is ${code}.`);
      expect(parsed?.to && !Array.isArray(parsed.to) ? parsed.to.value[0] : undefined).toMatchObject({
        address,
        name: address === 'ada@example.test' ? 'Ada Lovelace' : 'Grace Hopper',
      });
      expect(parsed?.messageId).toMatch(/^<.+@.+>$/);
      const line = (name: string) => parsed?.headerLines.find((h) => h.key === name)?.line ?? '';
      expect(line('list-unsubscribe')).toMatch(
        /^List-Unsubscribe: <https:\/\/mail\.acme\.test\/unsubscribe\/[^>]+>/,
      );
      expect(line('list-unsubscribe-post')).toBe('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
      expect(got?.request.ConfigurationSetName).toBe('mailroom-events');
    }
    // The emulator keeps both, under the ids it answered.
    const stored = new Set((await ses.store()).map((e) => e.messageId));
    for (const s of sent) expect(stored.has(s.sesMessageId)).toBe(true);
  });

  it('an unreachable SES endpoint fails the start of serve and worker with exit 1 and one line', async () => {
    for (const command of ['serve', 'worker']) {
      const cli = startCli(dir, [
        command,
        ...(command === 'serve' ? ['--port', '0'] : []),
        '--database',
        join(dir, 'down.db'),
        '--ses-region',
        'us-east-1',
        '--ses-endpoint',
        'http://127.0.0.1:1',
      ]);
      expect(await cli.done).toBe(1);
      expect(cli.out).toBe('');
      expect(cli.err).toMatch(
        /^mailroom: cannot reach Amazon SES in us-east-1 at http:\/\/127\.0\.0\.1:1[^\n]*ECONNREFUSED[^\n]*\n$/,
      );
    }
  });

  it('refuses --ses-region with --smtp or --outbox, and --ses-endpoint alone', async () => {
    for (const argv of [
      ['--ses-region', 'us-east-1', '--smtp', 'smtp://127.0.0.1:25'],
      ['--ses-region', 'us-east-1', '--outbox', 'out'],
      ['--ses-endpoint', ses.endpoint],
      ['--ses-region', 'US EAST'],
    ]) {
      const cli = startCli(dir, ['worker', '--database', join(dir, 'x.db'), ...argv]);
      expect(await cli.done, argv.join(' ')).toBe(2);
      expect(cli.err).toMatch(/--ses-region|--smtp/);
    }
  });
});
