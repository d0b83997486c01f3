import { withAdminSession } from '../admin/admin-session.js';
import { DATABASE_FLAG, JSON_FLAG } from '../flags/args.js';
import { EXIT_OK } from '../output/cli-errors.js';
import { println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { Command } from './command.js';

/** `mailroom project create NAME [--sandbox]`: a project and its secret, printed this once. */
export const projectCreateCommand: Command = {
  name: 'project create',
  localOnly: 'creates a project in the database on this machine (a key belongs to one project)',
  summary: 'Create a project and print its secret (shown only once)',
  help: `Usage: mailroom project create NAME [--sandbox] [--database URL|FILE] [--json]

Creates a project and prints its secret. The secret is shown only this once (the
database keeps only its hash): store it now.

Options:
  --sandbox          issue a sandbox secret (sk_sandbox_...): mail is recorded, never delivered
  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --json             print {"project": {...}, "mode", "secret"} as JSON`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, sandbox: { type: 'boolean' } },
  positionals: { min: 1, max: 1, names: 'the project NAME' },
  async run(args, io) {
    const name = args.positionals[0] ?? '';
    const sandbox = args.flag('sandbox');
    const { project, secret } = await withAdminSession(args, io, ({ mailroom }) =>
      mailroom.admin.createProject({ name, sandbox }),
    );
    const mode = sandbox ? 'sandbox' : 'live';
    if (args.flag('json')) {
      printJson(io, { project, mode, secret });
      return EXIT_OK;
    }
    println(io.stdout, `Created project "${project.name}" (${project.id}).`);
    println(io.stdout, `Its ${mode} secret, shown only this once (store it now):`);
    println(io.stdout, `  ${secret}`);
    return EXIT_OK;
  },
};

/** `mailroom project list`: ids and names, never secrets. */
export const projectListCommand: Command = {
  name: 'project list',
  localOnly: 'lists the projects of the database on this machine (a key sees one project)',
  summary: 'List projects (ids and names)',
  help: `Usage: mailroom project list [--database URL|FILE] [--json]

Lists the projects, oldest first. Secrets are never shown: they are stored hashed.

Options:
  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --json             print an array of {"id", "name", "createdAt"} as JSON`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const projects = await withAdminSession(args, io, ({ store }) => store.listProjects());
    if (args.flag('json')) {
      printJson(io, projects);
      return EXIT_OK;
    }
    if (projects.length === 0) println(io.stdout, 'No projects yet (mailroom project create NAME).');
    for (const p of projects)
      println(io.stdout, `${p.id}  ${p.name}  (created ${p.createdAt.toISOString()})`);
    return EXIT_OK;
  },
};
