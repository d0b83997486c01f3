import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type RunningCli, startCli, waitForOutput } from './support/cli-harness.js';
import { type RangeHost, rangeHost } from './support/range-host.js';

/**
 * `--allow-host HOST:PORT` and `MAILROOM_ALLOW_HOSTS` on `mailroom serve` and `mailroom worker`: a CSV source
 * on a loopback server (standing for a MinIO next to the app) is refused without them (422 FETCH_REFUSED)
 * and imported with them, through the real command and its HTTP API.
 */
const CSV = Buffer.from(
  'email,firstName\r\nada@example.test,Ada\r\ngrace@example.test,Grace\r\nalan@example.test,Alan\r\n',
);

const emlFiles = (dir: string): string[] => {
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.eml'));
  } catch {
    return [];
  }
};

describe('mailroom serve and worker --allow-host', () => {
  let dir: string;
  let db: string;
  let outbox: string;
  let host: RangeHost;
  const running: RunningCli[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailroom-allow-host-'));
    db = join(dir, 'serve.db');
    outbox = join(dir, 'outbox');
    host = await rangeHost(CSV);
  });

  afterEach(async () => {
    for (const cli of running.splice(0)) {
      cli.stop();
      await cli.done;
    }
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function start(argv: string[], env: Record<string, string> = {}): RunningCli {
    const cli = startCli(dir, [...argv, '--database', db, '--outbox', outbox], env);
    running.push(cli);
    return cli;
  }

  /** Starts `serve`, returning its base URL and (on the first start) the demo project's secret. */
  async function serve(argv: string[], env: Record<string, string> = {}) {
    const cli = start(['serve', '--port', '0', ...argv], env);
    const [, base = ''] = await waitForOutput(cli, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
    return { cli, base };
  }

  async function stop(cli: RunningCli): Promise<void> {
    cli.stop();
    expect(await cli.done).toBe(0);
    running.splice(running.indexOf(cli), 1);
  }

  const broadcast = async (base: string, secret: string) => {
    const res = await fetch(`${base}/send/mail/broadcast`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        subject: 'Hello {{ profile.firstName }}',
        sender: 'demo@mailroom.local',
        message: '<p>Hi {{ profile.firstName }}</p>',
        sources: [{ type: 'CSV', config: { label: 'minio-list', url: host.url } }],
      }),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };

  it('serve refuses a loopback CSV source without the flag and imports it with --allow-host', async () => {
    const first = await serve([]);
    const [, secret = ''] = await waitForOutput(first.cli, /^\s+(sk_live_[\w-]+)$/m);
    expect(first.cli.out).not.toContain('fetches');
    const refused = await broadcast(first.base, secret);
    expect(refused).toMatchObject({ status: 422, json: { statusCode: 422, code: 'FETCH_REFUSED' } });
    expect(host.log).toEqual([]); // refused before any connection
    await stop(first.cli);

    const allowed = await serve(['--allow-host', host.allow, '--allow-host', 'minio.internal:9000']);
    expect(allowed.cli.out).toContain(
      `fetches   also from ${host.allow}, minio.internal:9000 (allow-listed)`,
    );
    const accepted = await broadcast(allowed.base, secret);
    expect(accepted).toMatchObject({
      status: 200,
      json: { data: { broadcastRef: expect.stringMatching(/^bc_/) } },
    });
    await vi.waitFor(() => expect(emlFiles(outbox)).toHaveLength(3), { timeout: 20_000, interval: 100 });
    expect(host.log.length).toBeGreaterThan(0);
  });

  it('worker takes MAILROOM_ALLOW_HOSTS: it imports the rows a serve without a worker accepted', async () => {
    const api = await serve(['--no-worker'], {
      MAILROOM_ALLOW_HOSTS: ` ${host.allow} , minio.internal:9000,`,
    });
    const [, secret = ''] = await waitForOutput(api.cli, /^\s+(sk_live_[\w-]+)$/m);
    const accepted = await broadcast(api.base, secret);
    expect(accepted.status).toBe(200);
    expect(emlFiles(outbox)).toEqual([]); // no worker yet

    const worker = start(['worker'], { MAILROOM_ALLOW_HOSTS: host.allow });
    await waitForOutput(worker, new RegExp(`fetches also from ${host.allow.replace(/\./g, '\\.')}\\)`));
    await vi.waitFor(() => expect(emlFiles(outbox)).toHaveLength(3), { timeout: 20_000, interval: 100 });
  });

  it('a value that is not HOST:PORT is a usage error (exit 2) naming it', async () => {
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['serve', '--allow-host', '127.0.0.1'], {}, /--allow-host must be HOST:PORT .*got '127\.0\.0\.1'/],
      [['serve', '--allow-host', 'http://minio:9000'], {}, /got 'http:\/\/minio:9000'/],
      [['worker', '--allow-host', '::1:9000'], {}, /--allow-host must be HOST:PORT/],
      [
        ['worker'],
        { MAILROOM_ALLOW_HOSTS: '127.0.0.1:9000,minio' },
        /MAILROOM_ALLOW_HOSTS must be HOST:PORT .*got 'minio'/,
      ],
    ];
    for (const [argv, env, message] of cases) {
      const cli = startCli(dir, [...argv, '--database', db, '--outbox', outbox], env);
      expect({ argv, code: await cli.done }).toEqual({ argv, code: 2 });
      expect(cli.err).toMatch(/^mailroom: [^\n]+\n$/);
      expect(cli.err).toMatch(message);
    }
  });

  it('--help of serve and worker shows the flag and its variable', async () => {
    for (const command of ['serve', 'worker']) {
      const cli = startCli(dir, [command, '--help']);
      expect(await cli.done).toBe(0);
      expect(cli.out).toContain('--allow-host HOST:PORT');
      expect(cli.out).toContain('MAILROOM_ALLOW_HOSTS');
    }
  });
});
