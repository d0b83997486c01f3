import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { DestinationLimits, DestinationOptions } from '@mailroom/core';
import { UsageError } from '../output/cli-errors.js';
import type { FlagSpec, ParsedArgs } from './args.js';

/** The flags of destinations and their limits (`serve`, `worker`). */
export const DESTINATION_FLAGS: FlagSpec = {
  'destination-limit': { type: 'string', multiple: true },
  'destination-group': { type: 'string', multiple: true },
  'destination-mx': { type: 'boolean' },
  'destination-config': { type: 'string' },
};

/** Help lines of {@link DESTINATION_FLAGS}. */
export const DESTINATION_FLAGS_HELP = `  --destination-limit NAME=LIMIT,...
                     limits of a destination, kept by every worker on the database together:
                     N/s, N/min, N/h, N/d and conn=N (sends at once per worker), for example
                     google=20/s,100000/d,conn=4; NAME * for every destination without its own
                     (repeatable). Destinations: google, microsoft, yahoo, apple, ... (README,
                     "Deliverability"), else the recipient's domain
  --destination-group NAME=DOMAIN,...
                     a destination group of your own, or new domains of one (hotmail.* matches
                     every hotmail. domain); replaces that group's default domains (repeatable)
  --destination-mx   place other domains by their MX host too (Google Workspace and Microsoft
                     365 domains join google and microsoft), asking the --dns-server servers
  --destination-config FILE
                     destinations as JSON (the engine's DestinationOptions); the flags above
                     are applied over it`;

const UNITS: Record<string, keyof DestinationLimits> = {
  s: 'perSecond',
  sec: 'perSecond',
  second: 'perSecond',
  m: 'perMinute',
  min: 'perMinute',
  minute: 'perMinute',
  h: 'perHour',
  hour: 'perHour',
  d: 'perDay',
  day: 'perDay',
};

/**
 * The engine's `destinations` option from the flags (over `--destination-config`), or undefined when
 * none is given. `dnsServers`: the `--dns-server` servers, asked by `--destination-mx`.
 */
export function destinationsOf(
  args: ParsedArgs,
  cwd: string,
  dnsServers: string[],
  command: string,
): DestinationOptions | undefined {
  const file = args.string('destination-config');
  const limitFlags = args.list('destination-limit');
  const groupFlags = args.list('destination-group');
  const mx = args.flag('destination-mx');
  if (!file && limitFlags.length === 0 && groupFlags.length === 0 && !mx) return undefined;
  let options: DestinationOptions = {};
  if (file) {
    try {
      options = JSON.parse(
        readFileSync(isAbsolute(file) ? file : join(cwd, file), 'utf8'),
      ) as DestinationOptions;
    } catch (error) {
      throw new UsageError(
        `--destination-config ${file}: ${error instanceof Error ? error.message : String(error)}`,
        command,
      );
    }
  }
  const limits = { ...options.limits };
  for (const flag of limitFlags) {
    const [name, spec] = split(flag, '--destination-limit', command);
    limits[name] = { ...limits[name], ...limitsOf(spec, flag, command) };
  }
  const groups = { ...options.groups };
  for (const flag of groupFlags) {
    const [name, spec] = split(flag, '--destination-group', command);
    groups[name] = spec.split(',').map((domain) => domain.trim().toLowerCase());
  }
  return {
    ...options,
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
    ...(Object.keys(groups).length > 0 ? { groups } : {}),
    ...(mx ? { mx: dnsServers.length > 0 ? { servers: dnsServers } : true } : {}),
  };
}

function split(flag: string, label: string, command: string): [string, string] {
  const at = flag.indexOf('=');
  const name = flag.slice(0, at).trim().toLowerCase();
  const spec = flag.slice(at + 1).trim();
  if (at <= 0 || name === '' || spec === '') {
    throw new UsageError(`${label} must be NAME=VALUE,..., got '${flag}'`, command);
  }
  return [name, spec];
}

function limitsOf(spec: string, flag: string, command: string): DestinationLimits {
  const limits: DestinationLimits = {};
  for (const part of spec.split(',').map((p) => p.trim())) {
    const conn = /^conn=(\d+)$/.exec(part);
    const rate = /^(\d+)\/([a-z]+)$/.exec(part);
    const unit = rate ? UNITS[rate[2] as string] : undefined;
    if (conn && Number(conn[1]) >= 1) limits.concurrency = Number(conn[1]);
    else if (rate && unit) limits[unit] = Number(rate[1]);
    else {
      throw new UsageError(
        `--destination-limit takes N/s, N/min, N/h, N/d or conn=N, got '${part}' in '${flag}'`,
        command,
      );
    }
  }
  return limits;
}
