import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CliIo, main } from '@mailroom/cli';
import { describe, expect, it } from 'vitest';

/** Runs `mailroom <argv>` in-process, capturing what it writes. */
async function run(argv: string[]) {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: { write: (s: string) => (out += s), isTTY: false },
    stderr: { write: (s: string) => (err += s) },
    env: {},
    cwd: mkdtempSync(join(tmpdir(), 'mailroom-lease-')),
    onShutdown: () => () => {},
  };
  const code = await main(argv, io);
  return { code, out, err };
}

describe('--lease SECONDS on serve and worker', () => {
  it.each(['serve', 'worker'])(
    '%s refuses a lease outside 5 to 3600 seconds, naming the flag, and --help shows it',
    async (command) => {
      for (const value of ['4', '3601', 'soon']) {
        const refused = await run([command, '--lease', value, '--database', ':memory:']);
        expect({ value, code: refused.code }).toEqual({ value, code: 2 });
        expect(refused.err).toContain('--lease');
      }
      const help = await run([command, '--help']);
      expect(help.code).toBe(0);
      expect(help.out).toContain('--lease SECONDS');
    },
  );
});
