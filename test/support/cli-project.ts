import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningCli, runCli, startCli, waitForOutput } from './cli-harness.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';

/** What a CLI test of admin commands stands on: a project on a SQLite file and a `mailroom serve` of it. */
export interface CliProject {
  /** The working directory of the commands (files the commands read go here). */
  dir: string;
  /** The SQLite database file. */
  db: string;
  /** The SMTP sink `serve` sends to. */
  sink: SmtpSink;
  /** The running `mailroom serve`. */
  serve: RunningCli;
  /** Its HTTP base URL on 127.0.0.1. */
  base: string;
  projectId: string;
  /** The project's first secret (a `full` key). */
  secret: string;
  /** `mailroom <argv> --project ID --database DB`: the command on the database. */
  local(argv: string[]): ReturnType<typeof runCli>;
  /** `mailroom --url BASE --key SECRET <argv>`: the command through the served API. */
  remote(argv: string[]): ReturnType<typeof runCli>;
  /** Stops `serve` and the sink, removes the directory. */
  close(): Promise<void>;
}

/**
 * A project created with `mailroom project create` on a fresh SQLite file, and `mailroom serve` of that
 * file on 127.0.0.1 sending to an SMTP sink: the fixture the CLI tests share, so that each admin command
 * is checked on the database and remotely, the same answer either way. `before` runs on the project
 * before `serve` starts (senders, templates, files); `serveArgs` are added to `serve`'s.
 */
export async function startCliProject(
  name: string,
  options: {
    before?: (project: Pick<CliProject, 'dir' | 'local'>) => Promise<void>;
    serveArgs?: string[];
  } = {},
): Promise<CliProject> {
  const dir = mkdtempSync(join(tmpdir(), `mailroom-${name}-cli-`));
  const db = join(dir, 'mailroom.db');
  const sink = await startSmtpSink();
  const created = await runCli(dir, ['project', 'create', 'Acme', '--database', db, '--json']);
  if (created.code !== 0) throw new Error(`project create failed: ${created.err}`);
  const {
    project: { id: projectId },
    secret,
  } = JSON.parse(created.out) as { project: { id: string }; secret: string };
  const local = (argv: string[]) => runCli(dir, [...argv, '--project', projectId, '--database', db]);
  await options.before?.({ dir, local });
  const serve = startCli(dir, [
    'serve',
    '--port',
    '0',
    '--database',
    db,
    '--smtp',
    sink.url,
    ...(options.serveArgs ?? []),
  ]);
  const [, base = ''] = await waitForOutput(serve, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
  return {
    dir,
    db,
    sink,
    serve,
    base,
    projectId,
    secret,
    local,
    remote: (argv) => runCli(dir, ['--url', base, '--key', secret, ...argv]),
    async close() {
      serve.stop();
      await serve.done;
      await sink.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
