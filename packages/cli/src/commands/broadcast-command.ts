import { setTimeout as sleep } from 'node:timers/promises';
import type { MailingStatus, MailingView } from '@mailroom/core';
import { withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG } from '../flags/args.js';
import { EXIT_OK } from '../output/cli-errors.js';
import { type CliIo, println } from '../output/io.js';
import { printFields, printJson } from '../output/output.js';
import { formatCounts, renderProgressBar } from '../output/progress-bar.js';
import type { Command } from './command.js';

/** Statuses in which deliveries are still being worked on: the live bar keeps polling. */
const ACTIVE: readonly MailingStatus[] = ['queued', 'sending'];
/** How often the live bar polls the store. */
const POLL_MS = 500;

/** `mailroom broadcast status --project ID REF`: delivery counts, live on a terminal. */
export const broadcastStatusCommand: Command = {
  name: 'broadcast status',
  summary: 'Show a broadcast’s delivery counts (a live progress bar on a terminal)',
  help: `Usage: mailroom broadcast status --project ID REF [--database URL|FILE] [--json] [--no-watch]

Shows the status of a broadcast (or of a single message, by its msg_ ref) and its
deliveries counted by status. On a terminal, a progress bar follows the broadcast
until every delivery is settled (Ctrl-C stops watching, not the broadcast).

Options:
  --project ID       the project (mailroom project list shows the ids)
  --no-watch         print the counts once, even on a terminal
  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --json             print {"ref", "status", "counts", ...} once as JSON`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, project: { type: 'string' }, 'no-watch': { type: 'boolean' } },
  positionals: { min: 1, max: 1, names: 'the broadcast REF' },
  async run(args, io) {
    const ref = args.positionals[0] ?? '';
    const json = args.flag('json');
    const watch = !json && !args.flag('no-watch') && io.stdout.isTTY === true;
    await withAdmin(args, io, async (admin) => {
      const read = () => admin.getMailing(ref);
      const view = watch ? await follow(io, read) : await read();
      if (json) printJson(io, view);
      else printView(io, view, !watch);
    });
    return EXIT_OK;
  },
};

/** Redraws the bar in place until the mailing settles or the user interrupts; returns the last view. */
async function follow(io: CliIo, read: () => Promise<MailingView>): Promise<MailingView> {
  const stopped = new AbortController();
  const disarm = io.onShutdown?.(() => stopped.abort()) ?? (() => {});
  try {
    let view = await read();
    for (;;) {
      io.stdout.write(`\r\x1b[2K${renderProgressBar(view.counts, view.status)}`);
      if (!ACTIVE.includes(view.status) || stopped.signal.aborted) break;
      await sleep(POLL_MS, undefined, { signal: stopped.signal }).catch(() => {});
      if (stopped.signal.aborted) break;
      view = await read();
    }
    io.stdout.write('\n');
    return view;
  } finally {
    disarm();
  }
}

function printView(io: CliIo, view: MailingView, withBar: boolean): void {
  const fields: Array<readonly [string, string]> = [
    [view.kind === 'broadcast' ? 'Broadcast' : 'Message', view.ref],
    ['Status', view.status],
    ['Batches', String(view.batchCount)],
    ['Created', view.createdAt.toISOString()],
  ];
  if (view.scheduleFor) fields.push(['Scheduled for', view.scheduleFor.toISOString()]);
  fields.push(['Deliveries', formatCounts(view.counts)]);
  // Local times and sending windows: what waits for which hour (UTC), earliest first.
  if (view.waiting && view.waiting.length > 0) {
    const hours = view.waiting.map((w) => `${w.count} at ${w.hour.toISOString().slice(0, 16)}Z`);
    fields.push(['Waiting', hours.join(', ')]);
  }
  printFields(io, fields);
  if (withBar) println(io.stdout, renderProgressBar(view.counts, view.status));
}
