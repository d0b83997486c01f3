import { MAX_PAUSE_MINUTES, type PauseView } from '@mailroom/core';
import type { AdminOperations } from '../admin/admin-operations.js';
import { withAdmin } from '../admin/admin-target.js';
import type { PauseInput } from '../admin/pause-operations.js';
import { DATABASE_FLAG, JSON_FLAG, type ParsedArgs } from '../flags/args.js';
import { EXIT_OK } from '../output/cli-errors.js';
import { type CliIo, println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { Command } from './command.js';

const FLAGS = { ...DATABASE_FLAG, ...JSON_FLAG, project: { type: 'string' } } as const;
const REASON_FLAG = { reason: { type: 'string' } } as const;
const COMMON_HELP = `  --project ID       the project (mailroom project list shows the ids)
  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --json             print the pauses in force afterwards as JSON`;

/** `mailroom pauses`: what is paused in the project, by whom, why, until when. */
export const pausesCommand: Command = {
  name: 'pauses',
  summary: 'List what is paused (broadcasts, the sending, destinations), by whom and why',
  help: `Usage: mailroom pauses --project ID [--database URL|FILE] [--json]

Lists the project's pauses in force: paused broadcasts, the project's whole sending,
and paused destinations, each with who paused it (an operator, or the reputation guard
with its rule and figures), why, since when and until when.

Options:
${COMMON_HELP}`,
  flags: FLAGS,
  positionals: { min: 0, max: 0, names: '' },
  run: (args, io) => act(args, io, '', (admin) => admin.pauses.list()),
};

/** `mailroom broadcast pause|resume --project ID REF`. */
export const broadcastPauseCommand: Command = {
  name: 'broadcast pause',
  summary: 'Pause a broadcast: deliveries in flight finish, no other is sent until resumed',
  help: `Usage: mailroom broadcast pause --project ID REF [--reason TEXT] [--database URL|FILE] [--json]

Pauses the broadcast: deliveries in flight finish, no other is sent until it is resumed
(mailroom broadcast resume), which continues where it stopped, none sent twice. A
cancelled or failed broadcast cannot be paused.

Options:
  --reason TEXT      why (shown with the pause, and in its broadcast.paused event)
${COMMON_HELP}`,
  flags: { ...FLAGS, ...REASON_FLAG },
  positionals: { min: 1, max: 1, names: 'the broadcast REF' },
  run: (args, io) => {
    const ref = args.positionals[0] ?? '';
    return act(args, io, `Paused broadcast ${ref}.`, (admin) =>
      admin.pauses.pauseBroadcast(ref, inputOf(args)),
    );
  },
};

export const broadcastResumeCommand: Command = {
  name: 'broadcast resume',
  summary: 'Resume a paused broadcast where it stopped',
  help: `Usage: mailroom broadcast resume --project ID REF [--database URL|FILE] [--json]

Resumes the broadcast: every delivery not sent is sent at its own time, none twice.
A broadcast that is not paused is left as it is.

Options:
${COMMON_HELP}`,
  flags: FLAGS,
  positionals: { min: 1, max: 1, names: 'the broadcast REF' },
  run: (args, io) => {
    const ref = args.positionals[0] ?? '';
    return act(args, io, `Resumed broadcast ${ref}.`, (admin) => admin.pauses.resumeBroadcast(ref));
  },
};

/** `mailroom sending pause|resume --project ID`: every mailing of the project. */
export const sendingPauseCommand: Command = {
  name: 'sending pause',
  summary: "Pause the project's whole sending (every broadcast and message)",
  help: `Usage: mailroom sending pause --project ID [--reason TEXT] [--database URL|FILE] [--json]

Pauses every delivery of the project (broadcasts and messages); they are still
accepted, and sent once the sending is resumed (mailroom sending resume).

Options:
  --reason TEXT      why (shown with the pause)
${COMMON_HELP}`,
  flags: { ...FLAGS, ...REASON_FLAG },
  positionals: { min: 0, max: 0, names: '' },
  run: (args, io) =>
    act(args, io, 'Paused the sending.', (admin) => admin.pauses.pauseSending(inputOf(args))),
};

export const sendingResumeCommand: Command = {
  name: 'sending resume',
  summary: "Resume the project's sending",
  help: `Usage: mailroom sending resume --project ID [--database URL|FILE] [--json]

Resumes the project's sending (pauses of single broadcasts and destinations stay).

Options:
${COMMON_HELP}`,
  flags: FLAGS,
  positionals: { min: 0, max: 0, names: '' },
  run: (args, io) => act(args, io, 'Resumed the sending.', (admin) => admin.pauses.resumeSending()),
};

/** `mailroom destination pause|resume --project ID NAME`. */
export const destinationPauseCommand: Command = {
  name: 'destination pause',
  summary: 'Pause the deliveries to a destination (a recipient domain), for some minutes or until resumed',
  help: `Usage: mailroom destination pause --project ID NAME [--minutes N] [--domains D,D] [--reason TEXT]
                                [--database URL|FILE] [--json]

Pauses the project's deliveries to a destination: NAME is a recipient domain
(gmail.com), or a group name given with --domains (microsoft --domains
outlook.com,hotmail.com).

Options:
  --minutes N        resume by itself after N minutes (1 to 43200; default: until resumed)
  --domains LIST     comma-separated recipient domains the destination covers (default: NAME)
  --reason TEXT      why (shown with the pause)
${COMMON_HELP}`,
  flags: { ...FLAGS, ...REASON_FLAG, minutes: { type: 'string' }, domains: { type: 'string' } },
  positionals: { min: 1, max: 1, names: 'the destination NAME' },
  run: (args, io) => {
    const name = args.positionals[0] ?? '';
    const input = inputOf(args);
    const minutes = args.int('minutes', { min: 1, max: MAX_PAUSE_MINUTES });
    const domains = args
      .string('domains')
      ?.split(',')
      .map((d) => d.trim())
      .filter((d) => d !== '');
    if (minutes !== undefined) input.minutes = minutes;
    if (domains !== undefined) input.domains = domains;
    return act(args, io, `Paused destination ${name}.`, (admin) =>
      admin.pauses.pauseDestination(name, input),
    );
  },
};

export const destinationResumeCommand: Command = {
  name: 'destination resume',
  summary: 'Resume the deliveries to a destination',
  help: `Usage: mailroom destination resume --project ID NAME [--database URL|FILE] [--json]

Resumes the project's deliveries to the destination NAME (paused by an operator or
by the reputation guard).

Options:
${COMMON_HELP}`,
  flags: FLAGS,
  positionals: { min: 1, max: 1, names: 'the destination NAME' },
  run: (args, io) => {
    const name = args.positionals[0] ?? '';
    return act(args, io, `Resumed destination ${name}.`, (admin) => admin.pauses.resumeDestination(name));
  },
};

/** Every pause command, in the order `mailroom --help` lists them. */
export const PAUSE_COMMANDS: readonly Command[] = [
  pausesCommand,
  broadcastPauseCommand,
  broadcastResumeCommand,
  sendingPauseCommand,
  sendingResumeCommand,
  destinationPauseCommand,
  destinationResumeCommand,
];

/** Runs `work`, then prints what it did and the pauses in force (or them as JSON). */
async function act(
  args: ParsedArgs,
  io: CliIo,
  done: string,
  work: (admin: AdminOperations) => Promise<PauseView[]>,
): Promise<number> {
  const pauses = await withAdmin(args, io, work);
  if (args.flag('json')) {
    printJson(io, pauses);
    return EXIT_OK;
  }
  if (done) println(io.stdout, done);
  if (pauses.length === 0) println(io.stdout, 'Nothing is paused.');
  for (const line of pauses.flatMap(describePause)) println(io.stdout, line);
  return EXIT_OK;
}

/** One pause in words: what, by whom, since and until when, why; a guard's rule with its figures. */
export function describePause(p: PauseView): string[] {
  const what =
    p.scope === 'broadcast'
      ? `broadcast ${p.target}`
      : p.scope === 'project'
        ? 'the sending'
        : `destination ${p.target}${p.domains.length > 1 || p.domains[0] !== p.target ? ` (${p.domains.join(', ')})` : ''}`;
  const until = p.until ? `until ${p.until.toISOString()}` : 'until resumed';
  const lines = [`Paused: ${what}, by ${p.by} since ${p.createdAt.toISOString()}, ${until}`];
  if (p.reason) lines.push(`  reason: ${p.reason}`);
  if (p.rule) {
    const r = p.rule;
    const window = r.windowMs === null ? 'over the broadcast' : `over ${Math.round(r.windowMs / 60_000)} min`;
    lines.push(
      `  rule: ${r.name}: ${r.count} ${r.signal} of ${r.attempts} attempts ${window} (${percent(r.rate)} > ${percent(r.threshold)}, minimum ${r.minimum})`,
    );
  }
  return lines;
}

function percent(rate: number): string {
  return `${(rate * 100).toFixed(1)}%`;
}

function inputOf(args: ParsedArgs): PauseInput {
  const reason = args.string('reason');
  return reason === undefined ? {} : { reason };
}
