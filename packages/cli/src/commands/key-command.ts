import { KEY_SCOPES, type KeyScope, type KeyView } from '@mailroom/core';
import { withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG } from '../flags/args.js';
import { EXIT_OK, UsageError } from '../output/cli-errors.js';
import { println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { Command } from './command.js';

const PROJECT_FLAG = { project: { type: 'string' } } as const;
const DATABASE_HELP = `  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)`;

/** One line of `key list`: never a secret. */
function keyLine(key: KeyView): string {
  const domains = key.domains.length > 0 ? key.domains.join(',') : 'any sender';
  const used = key.lastUsedAt ? `used ${key.lastUsedAt.toISOString()}` : 'never used';
  const until = key.state === 'expiring' && key.expiresAt ? ` until ${key.expiresAt.toISOString()}` : '';
  // The name last, quoted (it may hold spaces), so that the columns before it keep their places.
  const name = key.name === null ? '' : `  ${JSON.stringify(key.name)}`;
  return `${key.id}  ${key.prefix}…  ${key.scope}  ${domains}  ${key.state}${until}  created ${key.createdAt.toISOString()}  ${used}${name}`;
}

/**
 * The one scope of `--scope`. A key has exactly one: `--scope sending --scope read` (or `sending,read`)
 * would otherwise make a key that does less or more than the line says, so it is refused, saying what
 * to make instead.
 */
function scopeOf(values: readonly string[], command: string): KeyScope {
  const named = values.flatMap((value) => value.split(/[\s,]+/)).filter((value) => value !== '');
  if (named.length === 0) throw new UsageError('missing --scope', command);
  for (const scope of named) {
    if (!(KEY_SCOPES as readonly string[]).includes(scope)) {
      throw new UsageError(`--scope must be one of ${KEY_SCOPES.join(', ')}, got '${scope}'`, command);
    }
  }
  const distinct = [...new Set(named)];
  if (distinct.length > 1 || values.length > 1) {
    throw new UsageError(
      `a key has one scope, got ${distinct.join(' and ')}: give --scope once (full holds sending and read; for both without the rest, make one key of each)`,
      command,
    );
  }
  return distinct[0] as KeyScope;
}

/** `1h`, `30m`, `90s`, `2d` or a number of seconds, as seconds. */
export function parseGrace(value: string, command: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(value.trim());
  if (!match)
    throw new UsageError(`--grace must be a duration such as 90s, 30m, 1h or 2d, got '${value}'`, command);
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[match[2] as '' | 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

/** `mailroom key create --project ID --scope S [--domain D]...`: prints the key and its secret once. */
export const keyCreateCommand: Command = {
  name: 'key create',
  summary:
    'Make an API key with a scope (full, sending, read) and a name, optionally limited to sender domains',
  help: `Usage: mailroom key create --project ID --scope full|sending|read [--name NAME] [--domain DOMAIN]...
                          [--sandbox] [--database URL|FILE] [--json]

Makes a key of the project and prints its secret once (only its digest is stored).
  full     every route of the HTTP API
  sending  the send endpoints only (POST /send/mail, /send/mail/broadcast and its batches)
  read     reads (GET) of the management routes

Options:
  --project ID       the project (mailroom project list shows the ids)
  --scope S          full, sending or read (one: a key has one scope)
  --name NAME        what the key is for ("CI", "marketing site"), shown in key list and the
                     dashboard (1 to 100 characters; a rotation passes it on)
  --domain DOMAIN    the key may send only from senders of DOMAIN (repeatable; default: any sender)
  --sandbox          a sandbox key: accepted and recorded, never delivered
${DATABASE_HELP}
  --json             print { key, secret } as JSON`,
  flags: {
    ...DATABASE_FLAG,
    ...JSON_FLAG,
    ...PROJECT_FLAG,
    // Repeatable only to refuse a repetition with a message about scopes (scopeOf).
    scope: { type: 'string', multiple: true },
    name: { type: 'string' },
    domain: { type: 'string', multiple: true },
    sandbox: { type: 'boolean' },
  },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const scope = scopeOf(args.list('scope'), args.command);
    const name = args.string('name');
    const created = await withAdmin(args, io, (admin) =>
      admin.keys.create({
        scope,
        domains: args.list('domain'),
        mode: args.flag('sandbox') ? 'sandbox' : 'live',
        ...(name !== undefined ? { name } : {}),
      }),
    );
    if (args.flag('json')) {
      printJson(io, { key: created.key, secret: created.secret });
      return EXIT_OK;
    }
    const named = created.key.name === null ? '' : ` "${created.key.name}"`;
    println(io.stdout, `Created key ${created.key.id}${named} (${created.key.scope})`);
    if (created.key.domains.length > 0) println(io.stdout, `Senders: ${created.key.domains.join(', ')} only`);
    println(io.stdout, `Secret (shown once, keep it): ${created.secret}`);
    return EXIT_OK;
  },
};

/** `mailroom key list --project ID`. */
export const keyListCommand: Command = {
  name: 'key list',
  summary: "List a project's API keys (name, prefix, scope, domains, state, created, last used)",
  help: `Usage: mailroom key list --project ID [--database URL|FILE] [--json]

Lists the project's keys, oldest first, revoked and expired ones included. Never their
secrets: a key is told apart by its id and prefix.`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, ...PROJECT_FLAG },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const keys = await withAdmin(args, io, (admin) => admin.keys.list());
    if (args.flag('json')) {
      printJson(io, keys);
      return EXIT_OK;
    }
    for (const key of keys) println(io.stdout, keyLine(key));
    return EXIT_OK;
  },
};

/** `mailroom key revoke --project ID KEY_ID`. */
export const keyRevokeCommand: Command = {
  name: 'key revoke',
  summary: 'Revoke an API key at once',
  help: `Usage: mailroom key revoke --project ID KEY_ID [--database URL|FILE] [--json]

Revokes the key: from now on every request with it is answered 401.`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, ...PROJECT_FLAG },
  positionals: { min: 1, max: 1, names: 'KEY_ID' },
  async run(args, io) {
    const id = args.positionals[0] ?? '';
    const key = await withAdmin(args, io, (admin) => admin.keys.revoke(id));
    if (args.flag('json')) {
      printJson(io, key);
      return EXIT_OK;
    }
    println(io.stdout, `Revoked key ${key.id}`);
    return EXIT_OK;
  },
};

/** `mailroom key rotate --project ID KEY_ID --grace 1h`. */
export const keyRotateCommand: Command = {
  name: 'key rotate',
  summary: 'Replace an API key by a new one; the old one works for a grace period',
  help: `Usage: mailroom key rotate --project ID KEY_ID [--grace DURATION] [--database URL|FILE] [--json]

Makes a new key of the same scope, domains and name and prints its secret once. The old key
keeps working for the grace period (default 0: it stops at once), then answers 401.

Options:
  --grace DURATION   90s, 30m, 1h, 2d or seconds (at most 30 days)
${DATABASE_HELP}
  --json             print { key, secret, previous } as JSON`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, ...PROJECT_FLAG, grace: { type: 'string' } },
  positionals: { min: 1, max: 1, names: 'KEY_ID' },
  async run(args, io) {
    const id = args.positionals[0] ?? '';
    const grace = args.string('grace');
    const graceSeconds = grace === undefined ? 0 : parseGrace(grace, args.command);
    const rotated = await withAdmin(args, io, (admin) => admin.keys.rotate(id, { graceSeconds }));
    if (args.flag('json')) {
      printJson(io, rotated);
      return EXIT_OK;
    }
    println(io.stdout, `Rotated key ${rotated.previous.id} -> ${rotated.key.id} (${rotated.key.scope})`);
    const until = rotated.previous.expiresAt?.toISOString() ?? 'now';
    println(io.stdout, `The old key works until ${until}`);
    println(io.stdout, `Secret (shown once, keep it): ${rotated.secret}`);
    return EXIT_OK;
  },
};
