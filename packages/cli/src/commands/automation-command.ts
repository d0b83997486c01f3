import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { MailroomError, type RunStatus, type WorkflowView } from '@mailroom/core';
import { withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG, type ParsedArgs } from '../flags/args.js';
import { EXIT_OK, UsageError } from '../output/cli-errors.js';
import { type CliIo, println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { Command } from './command.js';

const FLAGS = { ...DATABASE_FLAG, ...JSON_FLAG, project: { type: 'string' } } as const;
const COMMON_HELP = `  --project ID       the project (mailroom project list shows the ids)
  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --json             print the answer as JSON`;

/** `mailroom track EVENT CONTACT [--id ID] [--properties JSON]`. */
export const trackCommand: Command = {
  name: 'track',
  summary: 'Track an event of a contact: starts, wakes and ends the runs of workflows',
  help: `Usage: mailroom track --project ID EVENT CONTACT [--id ID] [--properties JSON] [--json]

EVENT is the event's name (cart.abandoned); CONTACT the contact's address. With --id, a second
call with the same id does nothing.

Options:
  --id ID            the event's id (a repeat is a no-op)
  --properties JSON  a JSON object: the workflow's messages read it as event.<name>
${COMMON_HELP}`,
  flags: { ...FLAGS, id: { type: 'string' }, properties: { type: 'string' } },
  positionals: { min: 2, max: 2, names: 'EVENT and CONTACT' },
  run: async (args, io) => {
    const [event = '', contact = ''] = args.positionals;
    const id = args.string('id');
    const properties = propertiesOf(args);
    const result = await withAdmin(args, io, (admin) =>
      admin.automations.track({
        event,
        contact,
        ...(id ? { id } : {}),
        ...(properties ? { properties } : {}),
      }),
    );
    if (args.flag('json')) {
      printJson(io, result);
      return EXIT_OK;
    }
    println(io.stdout, result.recorded ? `Tracked ${event} ${result.id}.` : `Already tracked: ${result.id}.`);
    for (const s of result.started) println(io.stdout, `Started run ${s.run} of ${s.workflow}.`);
    return EXIT_OK;
  },
};

/** `mailroom automations`: the project's workflows with their runs. */
export const automationListCommand: Command = {
  name: 'automations',
  summary: "List the project's workflows with their runs per step",
  help: `Usage: mailroom automations --project ID [--database URL|FILE] [--json]

Options:
${COMMON_HELP}`,
  flags: FLAGS,
  positionals: { min: 0, max: 0, names: '' },
  run: async (args, io) =>
    printWorkflows(args, io, await withAdmin(args, io, (admin) => admin.automations.list())),
};

/** `mailroom automation create FILE`. */
export const automationCreateCommand: Command = {
  name: 'automation create',
  summary: 'Create a workflow from a JSON definition file',
  help: `Usage: mailroom automation create --project ID FILE [--json]

FILE holds the definition as JSON (docs/automations.md): name, trigger, steps, and optionally
reentry and exitOn. A bad one is refused naming its path (steps[2].next: No step "x").

Options:
${COMMON_HELP}`,
  flags: FLAGS,
  positionals: { min: 1, max: 1, names: 'the definition FILE' },
  run: async (args, io) => {
    const definition = await definitionFile(args, io);
    const workflow = await withAdmin(args, io, (admin) => admin.automations.create(definition));
    return printWorkflows(args, io, [workflow], `Created workflow ${workflow.id}.`);
  },
};

/** `mailroom automation update ID FILE`. */
export const automationUpdateCommand: Command = {
  name: 'automation update',
  summary: 'Write the next version of a workflow (running runs stay on theirs)',
  help: `Usage: mailroom automation update --project ID WORKFLOW FILE [--json]

Options:
${COMMON_HELP}`,
  flags: FLAGS,
  positionals: { min: 2, max: 2, names: 'the WORKFLOW id and the definition FILE' },
  run: async (args, io) => {
    const definition = await definitionFile(args, io, 1);
    const id = args.positionals[0] ?? '';
    const workflow = await withAdmin(args, io, (admin) => admin.automations.update(id, definition));
    return printWorkflows(
      args,
      io,
      [workflow],
      `Updated workflow ${workflow.id}: version ${workflow.version}.`,
    );
  },
};

/** `mailroom automation pause|resume|delete ID`. */
function actionCommand(action: 'pause' | 'resume' | 'delete', summary: string): Command {
  return {
    name: `automation ${action}`,
    summary,
    help: `Usage: mailroom automation ${action} --project ID WORKFLOW [--json]

Options:
${COMMON_HELP}`,
    flags: FLAGS,
    positionals: { min: 1, max: 1, names: 'the WORKFLOW id' },
    run: async (args, io) => {
      const id = args.positionals[0] ?? '';
      if (action === 'delete') {
        await withAdmin(args, io, (admin) => admin.automations.remove(id));
        println(io.stdout, `Deleted workflow ${id}; its runs end.`);
        return EXIT_OK;
      }
      const workflow = await withAdmin(args, io, (admin) =>
        action === 'pause' ? admin.automations.pause(id) : admin.automations.resume(id),
      );
      return printWorkflows(
        args,
        io,
        [workflow],
        `${action === 'pause' ? 'Paused' : 'Resumed'} workflow ${id}.`,
      );
    },
  };
}

/** `mailroom automation runs ID [--status S]`. */
export const automationRunsCommand: Command = {
  name: 'automation runs',
  summary: "List a workflow's runs, newest first",
  help: `Usage: mailroom automation runs --project ID WORKFLOW [--status active|completed|exited]
                           [--limit N] [--after RUN] [--json]

Options:
  --status S         only runs in this state
  --limit N          at most N runs (1 to 1000; default 100)
  --after RUN        the page after this run id
${COMMON_HELP}`,
  flags: { ...FLAGS, status: { type: 'string' }, limit: { type: 'string' }, after: { type: 'string' } },
  positionals: { min: 1, max: 1, names: 'the WORKFLOW id' },
  run: async (args, io) => {
    const id = args.positionals[0] ?? '';
    const status = args.string('status');
    if (status !== undefined && !['active', 'completed', 'exited'].includes(status)) {
      throw new UsageError(`${args.command}: --status is active, completed or exited`);
    }
    const limit = args.int('limit', { min: 1, max: 1000 });
    const after = args.string('after');
    const runs = await withAdmin(args, io, (admin) =>
      admin.automations.runs(id, {
        ...(status ? { status: status as RunStatus } : {}),
        ...(limit ? { limit } : {}),
        ...(after ? { after } : {}),
      }),
    );
    if (args.flag('json')) {
      printJson(io, runs);
      return EXIT_OK;
    }
    if (runs.length === 0) println(io.stdout, 'No runs.');
    for (const r of runs) {
      const where =
        r.status === 'active' ? `at ${r.step} until ${r.dueAt?.toISOString() ?? '-'}` : r.endReason;
      println(io.stdout, `${r.id}\t${r.contact}\t${r.status}\t${where}\tv${r.version}`);
    }
    return EXIT_OK;
  },
};

/** `mailroom automation stats ID`: runs entered, waiting, passed and exited at each step. */
export const automationStatsCommand: Command = {
  name: 'automation stats',
  summary: "A workflow's runs per step: entered, waiting, passed, exited",
  help: `Usage: mailroom automation stats --project ID WORKFLOW [--json]

Read from counters the store keeps with the runs' moves (no run is read). A step only an earlier
version has is listed after the current version's steps, its type "-".

Options:
${COMMON_HELP}`,
  flags: FLAGS,
  positionals: { min: 1, max: 1, names: 'the WORKFLOW id' },
  run: async (args, io) => {
    const id = args.positionals[0] ?? '';
    const stats = await withAdmin(args, io, (admin) => admin.automations.stats(id));
    if (args.flag('json')) {
      printJson(io, stats);
      return EXIT_OK;
    }
    println(io.stdout, `${stats.workflow}	v${stats.version}`);
    println(io.stdout, 'step	type	entered	waiting	passed	exited');
    for (const s of stats.steps) {
      println(io.stdout, `${s.id}	${s.type ?? '-'}	${s.entered}	${s.waiting}	${s.passed}	${s.exited}`);
    }
    return EXIT_OK;
  },
};

/** Every automation command, in the order `mailroom --help` lists them. */
export const AUTOMATION_COMMANDS: readonly Command[] = [
  trackCommand,
  automationListCommand,
  automationCreateCommand,
  automationUpdateCommand,
  actionCommand('pause', 'Pause a workflow: no run starts, due steps wait'),
  actionCommand('resume', 'Resume a paused workflow'),
  actionCommand('delete', 'Delete a workflow: its runs end'),
  automationRunsCommand,
  automationStatsCommand,
];

function propertiesOf(args: ParsedArgs): Record<string, unknown> | undefined {
  const text = args.string('properties');
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`${args.command}: --properties must be a JSON object`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(`${args.command}: --properties must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

async function definitionFile(args: ParsedArgs, io: CliIo, index = 0): Promise<unknown> {
  const given = args.positionals[index] ?? '';
  const file = resolve(io.cwd, given);
  const text = await readFile(file, 'utf8').catch((error: unknown) => {
    throw new MailroomError('VALIDATION_FAILED', `cannot read ${given}`, { cause: error });
  });
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new MailroomError('VALIDATION_FAILED', `${given} is not JSON`, { cause: error });
  }
}

function printWorkflows(args: ParsedArgs, io: CliIo, workflows: WorkflowView[], done?: string): number {
  if (args.flag('json')) {
    printJson(io, done ? workflows[0] : workflows);
    return EXIT_OK;
  }
  if (done) println(io.stdout, done);
  else if (workflows.length === 0) println(io.stdout, 'No workflows yet: mailroom automation create FILE');
  for (const w of workflows) {
    const steps = Object.entries(w.runs.atStep)
      .map(([step, n]) => `${step}=${n}`)
      .join(' ');
    println(
      io.stdout,
      `${w.id}\t${w.status}\tv${w.version}\ton ${w.trigger}\t${w.name}\tactive ${w.runs.active} (${steps || '-'}), completed ${w.runs.completed}, exited ${w.runs.exited}`,
    );
  }
  return EXIT_OK;
}
