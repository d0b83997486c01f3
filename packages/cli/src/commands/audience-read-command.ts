import type { ImportView, ProfileView } from '@mailroom/core';
import { withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG } from '../flags/args.js';
import { PAGE_FLAGS, PAGE_HELP, pageOf, printPage } from '../flags/page-flags.js';
import { EXIT_OK } from '../output/cli-errors.js';
import { type CliIo, println } from '../output/io.js';
import { printFields, printJson } from '../output/output.js';
import type { Command } from './command.js';

const PROJECT_FLAG = { project: { type: 'string' } } as const;

/** One line of a profile. */
function profileLine(p: ProfileView): string {
  const labels = p.labels.length > 0 ? `  [${p.labels.join(', ')}]` : '';
  return `${p.address}  ${p.name ?? '-'}  ${p.status}${labels}`;
}

function printImport(io: CliIo, view: ImportView): void {
  printFields(io, [
    ['Import', view.id],
    ['Group', view.group],
    ['Label', view.label],
    ['Status', view.status],
    ['Rows', `${view.rowsDone} done, ${view.rowsFailed} failed`],
    ...(view.error ? ([['Error', view.error]] as const) : []),
  ]);
  for (const e of view.rowErrors) println(io.stdout, `  line ${e.line}: ${e.reason}`);
}

/** `mailroom audience list`: the groups with their member counts. */
export const audienceListCommand: Command = {
  name: 'audience list',
  summary: "List a project's audience groups with their member counts",
  help: `Usage: mailroom audience list --project ID [--database URL|FILE] [--json]

Lists the audience groups by ref, with how many profiles each has.`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, ...PROJECT_FLAG },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const groups = await withAdmin(args, io, (admin) => admin.audience.listGroups());
    if (args.flag('json')) {
      printJson(io, groups);
      return EXIT_OK;
    }
    if (groups.length === 0) println(io.stdout, 'None.');
    for (const g of groups) {
      println(
        io.stdout,
        `${g.ref}  ${g.members} members${g.name ? `  ${g.name}` : ''}  created ${g.createdAt.toISOString()}`,
      );
    }
    return EXIT_OK;
  },
};

/** `mailroom audience profiles [--group REF] [--q TEXT] [--label L]`. */
export const audienceProfilesCommand: Command = {
  name: 'audience profiles',
  summary: 'List or search the profiles of a project (or the members of a group)',
  help: `Usage: mailroom audience profiles --project ID [--group REF | --q TEXT | --label LABEL] [--limit N] [--after CURSOR]
                                 [--database URL|FILE] [--json]

Lists profiles by address: the members of --group, or the project's profiles whose
address starts with --q or that carry --label.

Options:
  --group REF        the members of this audience group
  --q TEXT           addresses starting with TEXT
  --label LABEL      profiles with this label
${PAGE_HELP}
  --json             print { items, next } as JSON`,
  flags: {
    ...DATABASE_FLAG,
    ...JSON_FLAG,
    ...PAGE_FLAGS,
    ...PROJECT_FLAG,
    group: { type: 'string' },
    q: { type: 'string' },
    label: { type: 'string' },
  },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const group = args.string('group');
    const q = args.string('q');
    const label = args.string('label');
    const page = await withAdmin(args, io, (admin) =>
      group !== undefined
        ? admin.audience.listMembers(group, pageOf(args))
        : admin.audience.listProfiles({ ...pageOf(args), ...(q ? { q } : {}), ...(label ? { label } : {}) }),
    );
    printPage(io, args, page, profileLine);
    return EXIT_OK;
  },
};

/** `mailroom audience import --group REF --csv URL [--label L]`: starts a CSV import. */
export const audienceImportCommand: Command = {
  name: 'audience import',
  summary: 'Import a CSV file (by URL) into an audience group; the worker adds the profiles',
  help: `Usage: mailroom audience import --project ID --group REF --csv URL [--label LABEL] [--database URL|FILE] [--json]

Starts an import of the CSV file at URL into the group REF (it must exist): the file
is probed now (by byte ranges), then read by the worker a page at a time, adding
profiles (no mail is sent). mailroom audience import-status ID follows it.

Options:
  --group REF        the audience group the rows join
  --csv URL          the CSV file (its host must serve byte ranges)
  --label LABEL      the label of each imported profile (default: the group's ref)
  --json             print the import as JSON`,
  flags: {
    ...DATABASE_FLAG,
    ...JSON_FLAG,
    ...PROJECT_FLAG,
    group: { type: 'string' },
    csv: { type: 'string' },
    label: { type: 'string' },
  },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const group = args.required('group');
    const url = args.required('csv');
    const label = args.string('label');
    const started = await withAdmin(args, io, (admin) =>
      admin.audience.startImport({ url, group, ...(label ? { label } : {}) }),
    );
    if (args.flag('json')) printJson(io, started);
    else printImport(io, started);
    return EXIT_OK;
  },
};

/** `mailroom audience import-status ID`: an import's progress. */
export const audienceImportStatusCommand: Command = {
  name: 'audience import-status',
  summary: 'Show the progress of an audience import',
  help: `Usage: mailroom audience import-status --project ID IMPORT_ID [--database URL|FILE] [--json]

Shows an import's status, rows done and failed, and the failed rows' line numbers.`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, ...PROJECT_FLAG },
  positionals: { min: 1, max: 1, names: 'the IMPORT_ID' },
  async run(args, io) {
    const id = args.positionals[0] ?? '';
    const view = await withAdmin(args, io, (admin) => admin.audience.getImport(id));
    if (args.flag('json')) printJson(io, view);
    else printImport(io, view);
    return EXIT_OK;
  },
};
