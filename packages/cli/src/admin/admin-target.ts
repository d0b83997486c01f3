import { createMailroomClient } from '@mailroom/client';
import type { ParsedArgs } from '../flags/args.js';
import { domainsOptionsOf } from '../flags/domain-flags.js';
import { allowHostsOf, publicUrlOf } from '../flags/engine-flags.js';
import { UsageError } from '../output/cli-errors.js';
import type { CliIo } from '../output/io.js';
import { openEngine, resolveDatabase } from '../server/open-engine.js';
import type { AdminOperations } from './admin-operations.js';
import { requireProject } from './admin-session.js';
import { localAdmin } from './local-admin.js';
import { remoteAdmin } from './remote-admin.js';

/** Appended to every admin command's help. */
export const REMOTE_HELP = `Remotely: mailroom --url URL --key KEY <command> (or MAILROOM_URL and MAILROOM_KEY) runs it
through the HTTP API of a mailroom serve (URL: where the API is mounted) for the project of
KEY, instead of opening a database; the output is the same. Leave out --project and --database.`;

/** Where an admin command acts: a server's API (its URL and a project key), or the database here. */
export type AdminTarget = { kind: 'remote'; url: string; key: string } | { kind: 'local' };

/**
 * The target of the command line: remote when the global `--url` is given, or when `MAILROOM_URL` is
 * set and neither `--database` nor `--project` says otherwise (flags win over the environment); the
 * global `--key` (else `MAILROOM_KEY`) then names the project. A URL without a key, or a key without a
 * URL, is a usage error.
 */
export function adminTargetOf(
  args: ParsedArgs,
  env: Readonly<Record<string, string | undefined>>,
): AdminTarget {
  const envUrl = nonEmpty(env.MAILROOM_URL);
  const local = args.string('database') !== undefined || args.string('project') !== undefined;
  const url = args.globals.url ?? (local ? undefined : envUrl);
  const key = args.globals.key ?? nonEmpty(env.MAILROOM_KEY);
  if (url === undefined) {
    if (args.globals.key !== undefined) {
      throw new UsageError('--key goes with --url (the server to call), or MAILROOM_URL', args.command);
    }
    return { kind: 'local' };
  }
  if (key === undefined) {
    throw new UsageError('--url needs --key (a key of the project), or MAILROOM_KEY', args.command);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url must be an http(s) URL, got '${url}'`, args.command);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`--url must be an http(s) URL, got '${url}'`, args.command);
  }
  return { kind: 'remote', url: url.replace(/\/+$/, ''), key };
}

/**
 * A server's refusal of a private or loopback host advises this process's `--allow-host`, which a remote
 * command refuses: the allow-list that counts is the server's, so the advice names where to set it.
 */
function asServerAdvice(error: unknown, url: string): unknown {
  const advice =
    /To allow this host, add '([^']+)' to fetch\.allowHosts \(CLI: --allow-host [^,]+, or MAILROOM_ALLOW_HOSTS\)/;
  // The error and the API error it wraps (its cause) carry the same words: both are rewritten.
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    const entry = advice.exec(current.message)?.[1];
    if (entry === undefined) continue;
    current.message = current.message.replace(
      advice,
      `The server at ${url} decides: to allow this host, start its mailroom serve (and mailroom worker) with --allow-host ${entry}, or set MAILROOM_ALLOW_HOSTS=${entry} there (this command's --allow-host is for a local --database only)`,
    );
  }
  return error;
}

/**
 * Runs an admin command's `work` for one project: remotely through the HTTP API (see
 * {@link adminTargetOf}), or on the database of `--database` with the project of `--project`, the engine
 * opened without a transport and closed whatever happens. `localFlags` are the command's flags that
 * configure this process's engine (`--allow-host`, the DNS flags): remotely the server's own settings
 * apply, so they are refused rather than silently ignored.
 */
export async function withAdmin<T>(
  args: ParsedArgs,
  io: CliIo,
  work: (admin: AdminOperations) => Promise<T>,
  localFlags: readonly string[] = [],
): Promise<T> {
  const target = adminTargetOf(args, io.env);
  if (target.kind === 'remote') {
    for (const flag of ['project', 'database', ...localFlags]) {
      if (args.string(flag) !== undefined || args.list(flag).length > 0 || args.flag(flag)) {
        const why =
          flag === 'project'
            ? 'the key names the project'
            : flag === 'database'
              ? 'the server has the database'
              : "the server's own settings apply";
        throw new UsageError(`--${flag} is not taken with --url: ${why}`, args.command);
      }
    }
    const client = createMailroomClient({ url: target.url, key: target.key });
    return work(remoteAdmin(client, target.url)).catch((error: unknown) => {
      throw asServerAdvice(error, target.url);
    });
  }
  const database = resolveDatabase(args.string('database'), io, args.command);
  // The sealing secret of DKIM keys and the DNS settings, so that the engine opens keys and checks
  // domains as the server does; the allow-list, so that a webhook URL is checked as it will be sent to.
  const domains = { ...domainsOptionsOf(args, io.env, args.command), checkEveryMs: 0 };
  const allowHosts = allowHostsOf(args, io.env, args.command);
  // A command that shows received attachments signs their URLs under the server's public URL (the
  // signing key is in the database, so the server serves them).
  const publicUrl = localFlags.includes('public-url') ? publicUrlOf(args, io.env, args.command) : undefined;
  const { mailroom, store } = await openEngine({
    database,
    domains,
    ...(publicUrl ? { receiving: { baseUrl: publicUrl } } : {}),
    // `template preview --strict-variables`: a variable the sample lacks is an error naming it.
    strictVariables: args.flag('strict-variables'),
    ...(allowHosts.length > 0 ? { fetch: { allowHosts } } : {}),
  });
  try {
    const project = await requireProject(store, args.required('project'));
    return await work(localAdmin(mailroom, { project, mode: 'live' }));
  } finally {
    await mailroom.close();
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}
