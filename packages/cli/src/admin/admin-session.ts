import type { Mailroom, ProjectRecord, Store } from '@mailroom/core';
import { MailroomError } from '@mailroom/core';
import type { ParsedArgs } from '../flags/args.js';
import { domainsOptionsOf } from '../flags/domain-flags.js';
import type { CliIo } from '../output/io.js';
import { openEngine, resolveDatabase } from '../server/open-engine.js';

/** What an admin command works with: the engine (for its checks) and the store (for lookups). */
export interface AdminSession {
  /** The engine, for the admin operations and their validation. */
  mailroom: Mailroom;
  /** The store, for lookups the admin API has no call for. */
  store: Store;
}

/**
 * Opens the engine on the `--database` of `args` (no transport: admin commands never deliver), runs
 * `work`, and closes the store whatever happens.
 */
export async function withAdminSession<T>(
  args: ParsedArgs,
  io: CliIo,
  work: (session: AdminSession) => Promise<T>,
): Promise<T> {
  const database = resolveDatabase(args.string('database'), io, args.command);
  // The sealing secret of DKIM keys, so that the admin engine opens them as the server does.
  const domains = { ...domainsOptionsOf(args, io.env, args.command), checkEveryMs: 0 };
  const { mailroom, store } = await openEngine({ database, domains });
  try {
    return await work({ mailroom, store });
  } finally {
    await mailroom.close();
  }
}

/** The project with this id; `NOT_FOUND` with a hint otherwise. */
export async function requireProject(store: Store, id: string): Promise<ProjectRecord> {
  const project = await store.getProject(id);
  if (!project) {
    throw new MailroomError(
      'NOT_FOUND',
      `project ${id} not found (mailroom project list shows the projects)`,
    );
  }
  return project;
}
