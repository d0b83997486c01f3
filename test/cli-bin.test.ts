import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * How a clone starts the CLI from its sources. `start`: `tsx --conditions=mailroom-source
 * packages/cli/src/bin.ts` (tsx itself, not `npx tsx`: npm's wrapper dies of a forwarded SIGTERM instead
 * of passing on the exit code, which would hide the one under test; tsx relays the signal and the code).
 * `npx mailroom`: the root package's bin, `bin/mailroom.js`, which runs the sources in its own process.
 */
const ENTRIES = {
  'the start script': [
    join(root, 'node_modules/tsx/dist/cli.mjs'),
    '--conditions=mailroom-source',
    'packages/cli/src/bin.ts',
  ],
  'the root bin (npx mailroom)': [join(root, 'bin/mailroom.js')],
};

/** `mailroom ...args` from the repository root through `entry`. */
function spawnBin(
  entry: string[],
  args: string[],
): {
  child: ChildProcess;
  output: () => string;
  exit: Promise<number | null>;
} {
  let output = '';
  const child = spawn(process.execPath, [...entry, ...args], { cwd: root });
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

  it.each(Object.entries(ENTRIES))(
    '%s serves with no build, answers the printed curl request and exits 0 on SIGTERM',
    async (_, entry) => {
      const dir = mkdtempSync(join(tmpdir(), 'mailroom-bin-'));
      const outbox = join(dir, 'outbox');
      const bin = spawnBin(entry, [
        'serve',
        '--port',
        '0',
        '--database',
        join(dir, 'bin.db'),
        '--outbox',
        outbox,
      ]);
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
    },
    90_000,
  );

  it('npx mailroom at the root of a clone runs the CLI', async () => {
    const { stdout } = await promisify(execFile)('npx', ['mailroom', '--help'], {
      cwd: root,
      timeout: 60_000,
    });
    expect(stdout).toMatch(/^Usage: mailroom <command>/);
  }, 90_000);
});
