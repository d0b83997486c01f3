import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommandArgs } from '../packages/cli/src/flags/args.js';
import { DESTINATION_FLAGS, destinationsOf } from '../packages/cli/src/flags/destination-flags.js';

const parse = (argv: string[], cwd = tmpdir(), dns: string[] = []) =>
  destinationsOf(
    parseCommandArgs('worker', argv, DESTINATION_FLAGS, { min: 0, max: 0, names: '' }),
    cwd,
    dns,
    'worker',
  );

describe('--destination-* flags of serve and worker', () => {
  it('none given: no destinations option (a 421 slows the transport as before)', () => {
    expect(parse([])).toBeUndefined();
  });

  it('reads limits, groups and MX lookups, over a JSON config file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-dest-'));
    writeFileSync(
      join(dir, 'destinations.json'),
      JSON.stringify({
        limits: { google: { perDay: 1000 }, yahoo: { perMinute: 60 } },
        slowDownPauseMs: 2000,
      }),
    );
    const options = parse(
      [
        '--destination-config',
        'destinations.json',
        '--destination-limit',
        'google=20/s,500/min,conn=4',
        '--destination-limit',
        '*=10/h',
        '--destination-group',
        'partners=Partner.test,other.test',
        '--destination-mx',
      ],
      dir,
      ['127.0.0.1:5353'],
    );
    expect(options).toEqual({
      slowDownPauseMs: 2000,
      limits: {
        google: { perDay: 1000, perSecond: 20, perMinute: 500, concurrency: 4 },
        yahoo: { perMinute: 60 },
        '*': { perHour: 10 },
      },
      groups: { partners: ['partner.test', 'other.test'] },
      mx: { servers: ['127.0.0.1:5353'] },
    });
  });

  it('refuses a limit it cannot read, naming it', () => {
    expect(() => parse(['--destination-limit', 'google=20/fortnight'])).toThrow(/20\/fortnight/);
    expect(() => parse(['--destination-limit', 'google'])).toThrow(/NAME=VALUE/);
    expect(() => parse(['--destination-config', 'missing.json'])).toThrow(/missing\.json/);
  });
});
