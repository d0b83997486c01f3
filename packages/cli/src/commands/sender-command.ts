import type { SenderView } from '@mailroom/core';
import { withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG } from '../flags/args.js';
import { PAGE_FLAGS, PAGE_HELP, pageOf, printPage } from '../flags/page-flags.js';
import { EXIT_OK } from '../output/cli-errors.js';
import { println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { Command } from './command.js';

/** `Name <address>`, or the address alone. */
function senderLine(sender: SenderView): string {
  return sender.name ? `${sender.name} <${sender.address}>` : sender.address;
}

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
    // The view of the API: never a DKIM private key.
    const sender = await withAdmin(args, io, (admin) =>
      admin.senders.add({ address, ...(name === undefined ? {} : { name }) }),
    );
    if (args.flag('json')) {
      printJson(io, sender);
      return EXIT_OK;
    }
    println(io.stdout, `Added sender ${senderLine(sender)}.`);
    return EXIT_OK;
  },
};

/** `mailroom sender list`: the project's sender identities, a page at a time. */
export const senderListCommand: Command = {
  name: 'sender list',
  summary: "List a project's sender identities",
  help: `Usage: mailroom sender list --project ID [--limit N] [--after CURSOR] [--database URL|FILE] [--json]

Lists the sender identities by address, a page at a time (--after: the cursor printed
after a full page).

Options:
${PAGE_HELP}
  --json             print { items, next } as JSON`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, ...PAGE_FLAGS, project: { type: 'string' } },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const page = await withAdmin(args, io, (admin) => admin.senders.list(pageOf(args)));
    printPage(
      io,
      args,
      page,
      (s) =>
        `${senderLine(s)}  ${s.dkimSelector ? `dkim ${s.dkimSelector}` : 'domain key'}  created ${s.createdAt.toISOString()}`,
    );
    return EXIT_OK;
  },
};

/** `mailroom sender remove ADDRESS`. */
export const senderRemoveCommand: Command = {
  name: 'sender remove',
  summary: 'Remove a sender identity (requests from it are refused; mail accepted still goes)',
  help: `Usage: mailroom sender remove --project ID ADDRESS [--database URL|FILE] [--json]

Removes the sender identity: requests from ADDRESS are refused from now on; mail
already accepted still goes out.`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, project: { type: 'string' } },
  positionals: { min: 1, max: 1, names: 'the sender ADDRESS' },
  async run(args, io) {
    const address = args.positionals[0] ?? '';
    await withAdmin(args, io, (admin) => admin.senders.remove(address));
    if (args.flag('json')) printJson(io, { removed: address });
    else println(io.stdout, `Removed sender ${address}.`);
    return EXIT_OK;
  },
};
