import { withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG } from '../flags/args.js';
import { EXIT_OK } from '../output/cli-errors.js';
import { println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { Command } from './command.js';

/** `mailroom audience create --project ID --ref REF [--name N]`: an audience group. */
export const audienceCreateCommand: Command = {
  name: 'audience create',
  summary: 'Create an audience group',
  help: `Usage: mailroom audience create --project ID --ref REF [--name NAME] [--database URL|FILE] [--json]

Creates an audience group. Requests fill it with options.acquiringAudience and
broadcast to it with an audience source (or the top-level "audience": [REF]).

Options:
  --project ID       the project (mailroom project list shows the ids)
  --ref REF          the group's reference (letters, digits and ._:-)
  --name NAME        a human-readable name
  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --json             print the audience group as JSON`,
  flags: {
    ...DATABASE_FLAG,
    ...JSON_FLAG,
    project: { type: 'string' },
    ref: { type: 'string' },
    name: { type: 'string' },
  },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const ref = args.required('ref');
    const name = args.string('name');
    const group = await withAdmin(args, io, (admin) =>
      admin.audience.createGroup({ ref, ...(name === undefined ? {} : { name }) }),
    );
    if (args.flag('json')) {
      printJson(io, group);
      return EXIT_OK;
    }
    println(io.stdout, `Created audience group ${group.ref}${group.name ? ` (${group.name})` : ''}.`);
    return EXIT_OK;
  },
};
