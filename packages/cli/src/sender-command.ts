import { withAdmin } from './admin-target.js';
import { DATABASE_FLAG, JSON_FLAG } from './args.js';
import { EXIT_OK } from './cli-errors.js';
import type { Command } from './command.js';
import { println } from './io.js';
import { printJson } from './output.js';

/** `mailroom sender add --project ID ADDRESS [--name N]`: an address the project may send from. */
export const senderAddCommand: Command = {
  name: 'sender add',
  summary: 'Add a sender identity (an address a project may send from)',
  help: `Usage: mailroom sender add --project ID ADDRESS [--name NAME] [--database URL|FILE] [--json]

Adds ADDRESS as a sender identity of the project: requests may then use it as
their sender.

Options:
  --project ID       the project (mailroom project list shows the ids)
  --name NAME        display name used when a request gives none
  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --json             print the sender identity as JSON`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, project: { type: 'string' }, name: { type: 'string' } },
  positionals: { min: 1, max: 1, names: 'the sender ADDRESS' },
  async run(args, io) {
    const address = args.positionals[0] ?? '';
    const name = args.string('name');
    const sender = await withAdmin(args, io, (admin) =>
      admin.addSender({ address, ...(name === undefined ? {} : { name }) }),
    );
    if (args.flag('json')) {
      // The DKIM private key never leaves the database through the CLI.
      printJson(io, { ...sender, dkim: sender.dkim ? { selector: sender.dkim.selector } : null });
      return EXIT_OK;
    }
    const display = sender.name ? `${sender.name} <${sender.address}>` : sender.address;
    println(io.stdout, `Added sender ${display} (${sender.id}) to project ${sender.projectId}.`);
    return EXIT_OK;
  },
};
