import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './support/cli-harness.js';

/** `mailroom <argv>` in-process, in a folder of its own. */
const run = (argv: string[]) => runCli(mkdtempSync(join(tmpdir(), 'mailroom-lease-')), argv);

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
