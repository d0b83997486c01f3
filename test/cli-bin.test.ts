import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * `tsx --conditions=mailroom-source packages/cli/src/bin.ts ...` from the repository root, the way the root
 * `start` script runs it. tsx itself, not `npx tsx`: npm's wrapper dies of a forwarded SIGTERM instead of
 * passing on the exit code, which would hide the one under test. tsx relays the signal and the code.
 */
function spawnBin(args: string[]): {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
} {
  let output = '';
  const tsx = join(root, 'node_modules/tsx/dist/cli.mjs');
  const child = spawn(
    process.execPath,
    [tsx, '--conditions=mailroom-source', 'packages/cli/src/bin.ts', ...args],
    {
      cwd: root,
    },
  );
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.resume();
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exit };
}

describe('the mailroom bin', () => {
  let child: ChildProcess | undefined;

  afterEach(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('serves with no build, answers the printed curl request and exits 0 on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-bin-'));
    const outbox = join(dir, 'outbox');
    const bin = spawnBin(['serve', '--port', '0', '--database', join(dir, 'bin.db'), '--outbox', outbox]);
    child = bin.child;
    const [, base, secret] = await vi.waitFor(
      () => {
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+)[\s\S]*Bearer (sk_live_[\w-]+)/.exec(
          bin.output(),
        );
        if (!match) throw new Error(`not ready: ${bin.output()}`);
        return match;
      },
      { timeout: 60_000, interval: 100 },
    );
    const res = await fetch(`${base}/send/mail`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        subject: 'Hello {{ recipient.firstName }}',
        sender: 'demo@mailroom.local',
        template: { ref: 'welcome' },
        recipients: [{ address: 'ada@example.test', name: 'Ada Lovelace' }],
      }),
    });
    expect(res.status).toBe(200);
    await vi.waitFor(() => expect(readdirSync(outbox).filter((f) => f.endsWith('.eml'))).toHaveLength(1), {
      timeout: 20_000,
      interval: 100,
    });

    bin.child.kill('SIGTERM');
    expect(await bin.exit).toBe(0);
  }, 90_000);
});
