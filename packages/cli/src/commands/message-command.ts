import type { MailingView } from '@mailroom/core';
import { withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG } from '../flags/args.js';
import { PAGE_FLAGS, PAGE_HELP, pageOf, printPage } from '../flags/page-flags.js';
import { EXIT_OK } from '../output/cli-errors.js';
import { println } from '../output/io.js';
import { printFields, printJson } from '../output/output.js';
import { formatCounts } from '../output/progress-bar.js';
import type { Command } from './command.js';

/** `mailroom message status REF|MESSAGE-ID`: each recipient's delivery, attempts and events. */
export const messageStatusCommand: Command = {
  name: 'message status',
  summary: 'Show a message’s recipients: delivery status, attempts and events',
  help: `Usage: mailroom message status --project ID REF|MESSAGE-ID [--database URL|FILE] [--json]

Shows a single message by the ref the send answered (msg_...), or one recipient of any
mailing by its RFC Message-ID (<...@...>): each recipient's status, attempts, last
answer and events, oldest first.

Options:
  --project ID       the project (mailroom project list shows the ids)
  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --json             print the message with its recipients as JSON`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, project: { type: 'string' } },
  positionals: { min: 1, max: 1, names: 'the message REF or MESSAGE-ID' },
  async run(args, io) {
    const ref = args.positionals[0] ?? '';
    const view = await withAdmin(args, io, (admin) => admin.getMessage(ref));
    if (args.flag('json')) {
      printJson(io, view);
      return EXIT_OK;
    }
    printFields(io, [
      [view.kind === 'broadcast' ? 'Broadcast' : 'Message', view.ref],
      ['Status', view.status],
      // What the first recipient got, not the Liquid source (`Hello {{ recipient.firstName }}`).
      ['Subject', view.recipients[0]?.subject || view.subject],
      ['Created', view.createdAt.toISOString()],
      ['Deliveries', formatCounts(view.counts)],
    ]);
    for (const r of view.recipients) {
      const last = r.lastError ?? r.lastResponse;
      println(
        io.stdout,
        `${r.address}  ${r.status}  attempts ${r.attempts}  ${r.messageId}${last ? `  ${last}` : ''}`,
      );
      if (r.subject && r.subject !== view.recipients[0]?.subject)
        println(io.stdout, `  subject: ${r.subject}`);
      for (const entry of r.timeline) println(io.stdout, `  ${entry.at.toISOString()}  ${entry.type}`);
    }
    if (view.more) println(io.stdout, 'More recipients than listed.');
    return EXIT_OK;
  },
};

/** One line of a broadcast listing. */
function broadcastLine(view: MailingView): string {
  return `${view.ref}  ${view.status}  ${view.createdAt.toISOString()}  ${formatCounts(view.counts)}  ${view.subject}`;
}

/** `mailroom broadcast list`: the project's broadcasts, newest first, with their counts. */
export const broadcastListCommand: Command = {
  name: 'broadcast list',
  summary: "List a project's broadcasts, newest first, with their delivery counts",
  help: `Usage: mailroom broadcast list --project ID [--limit N] [--after CURSOR] [--database URL|FILE] [--json]

Lists the broadcasts, newest first: ref, status, creation time, deliveries by status
and subject (mailroom broadcast status REF for one).

Options:
${PAGE_HELP}
  --json             print { items, next } as JSON`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, ...PAGE_FLAGS, project: { type: 'string' } },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const page = await withAdmin(args, io, (admin) => admin.listBroadcasts(pageOf(args)));
    printPage(io, args, page, broadcastLine);
    return EXIT_OK;
  },
};
