import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * How a clone starts the CLI from its sources. `start`: `node --import tsx --conditions=mailroom-source
 * packages/cli/src/bin.ts`, one process (tsx's own CLI runs the program in a child and, when that child
 * does not confirm a relayed SIGTERM within 30 ms, which a busy machine misses, kills it with SIGKILL: a
 * Ctrl-C that cut the graceful stop short). `npx mailroom`: the root package's bin, `bin/mailroom.js`, which
 * runs the sources in its own process too. The start script is read from package.json, as pnpm runs it.
 */
const START: string[] = (
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start as string
).split(' ');
const ENTRIES = {
  // Without the leading `node` and the trailing `serve`: the cases pass their own command.
  'the start script': START.slice(1, -1),
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

/** The processes whose parent is `pid` (Linux's /proc), but tsx's esbuild service (it compiles, it serves nothing). */
function childrenOf(pid: number): string[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        // Fields after the command's closing parenthesis: state, then the parent's pid.
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const parent = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
        return parent === String(pid) && !stat.includes('(esbuild)');
      } catch {
        return false; // exited meanwhile
      }
    });
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
      // One process, so a Ctrl-C's SIGTERM reaches the server's own graceful stop: no child process.
      expect(
        childrenOf(bin.child.pid ?? 0).map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8')),
      ).toEqual([]);
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
