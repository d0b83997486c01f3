import type { SuppressionReason, SuppressionView } from '@mailroom/core';
import { withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG } from '../flags/args.js';
import { PAGE_FLAGS, PAGE_HELP, pageOf, printPage } from '../flags/page-flags.js';
import { EXIT_OK, UsageError } from '../output/cli-errors.js';
import { println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { Command } from './command.js';

const PROJECT_FLAG = { project: { type: 'string' } } as const;
const REASONS: readonly SuppressionReason[] = [
  'manual',
  'hard-bounce',
  'soft-bounce',
  'mailbox-unavailable',
  'complaint',
  'unsubscribe',
];

/** One line of a suppression. */
function suppressionLine(s: SuppressionView): string {
  return `${s.address}  ${s.reason}${s.detail ? ` (${s.detail})` : ''}  since ${s.createdAt.toISOString()}`;
}

/** `mailroom suppression list [--q TEXT]`. */
export const suppressionListCommand: Command = {
  name: 'suppression list',
  summary: "List or search a project's suppressed addresses (reason and date)",
  help: `Usage: mailroom suppression list --project ID [--q TEXT] [--limit N] [--after CURSOR] [--database URL|FILE] [--json]

Lists the suppressed addresses by address, with their reason and date; --q keeps those
containing TEXT. Suppressed addresses get no broadcast mail.

Options:
  --q TEXT           only addresses containing TEXT
${PAGE_HELP}
  --json             print { items, next } as JSON`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, ...PAGE_FLAGS, ...PROJECT_FLAG, q: { type: 'string' } },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const q = args.string('q');
    const page = await withAdmin(args, io, (admin) =>
      admin.suppressions.list({ ...pageOf(args), ...(q ? { q } : {}) }),
    );
    printPage(io, args, page, suppressionLine);
    return EXIT_OK;
  },
};

/** `mailroom suppression add ADDRESS [--reason R] [--detail D]`. */
export const suppressionAddCommand: Command = {
  name: 'suppression add',
  summary: 'Suppress an address: it gets no more broadcast mail',
  help: `Usage: mailroom suppression add --project ID ADDRESS [--reason R] [--detail TEXT] [--database URL|FILE] [--json]

Suppresses ADDRESS (replacing the reason and date of an existing suppression).

Options:
  --reason R         ${REASONS.join(', ')} (default manual)
  --detail TEXT      a note kept with it
  --json             print the suppression as JSON`,
  flags: {
    ...DATABASE_FLAG,
    ...JSON_FLAG,
    ...PROJECT_FLAG,
    reason: { type: 'string' },
    detail: { type: 'string' },
  },
  positionals: { min: 1, max: 1, names: 'the ADDRESS' },
  async run(args, io) {
    const address = args.positionals[0] ?? '';
    const reason = args.string('reason');
    if (reason !== undefined && !(REASONS as readonly string[]).includes(reason)) {
      throw new UsageError(`--reason must be one of ${REASONS.join(', ')}, got '${reason}'`, args.command);
    }
    const detail = args.string('detail');
    const suppression = await withAdmin(args, io, (admin) =>
      admin.suppressions.add({
        address,
        ...(reason ? { reason: reason as SuppressionReason } : {}),
        ...(detail !== undefined ? { detail } : {}),
      }),
    );
    if (args.flag('json')) printJson(io, suppression);
    else println(io.stdout, `Suppressed ${suppressionLine(suppression)}`);
    return EXIT_OK;
  },
};

/** `mailroom suppression lift ADDRESS`. */
export const suppressionLiftCommand: Command = {
  name: 'suppression lift',
  summary: 'Lift a suppression: the address may be mailed again',
  help: `Usage: mailroom suppression lift --project ID ADDRESS [--database URL|FILE] [--json]

Lifts the suppression of ADDRESS: broadcasts reach it again. Exit 1 when it is not
suppressed.`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, ...PROJECT_FLAG },
  positionals: { min: 1, max: 1, names: 'the ADDRESS' },
  async run(args, io) {
    const address = args.positionals[0] ?? '';
    await withAdmin(args, io, (admin) => admin.suppressions.lift(address));
    if (args.flag('json')) printJson(io, { lifted: address });
    else println(io.stdout, `Lifted the suppression of ${address}.`);
    return EXIT_OK;
  },
};
