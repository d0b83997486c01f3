import type { FormPatch, FormView } from '@mailroom/core';
import { withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG, type ParsedArgs } from '../flags/args.js';
import { EXIT_OK } from '../output/cli-errors.js';
import { type CliIo, println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { Command } from './command.js';

const FLAGS = { ...DATABASE_FLAG, ...JSON_FLAG, project: { type: 'string' } } as const;
const FORM_FLAGS = {
  ...FLAGS,
  name: { type: 'string' },
  topic: { type: 'string' },
  group: { type: 'string' },
  origins: { type: 'string' },
  'consent-text': { type: 'string' },
  sender: { type: 'string' },
  'confirm-template': { type: 'string' },
} as const;
const COMMON_HELP = `  --project ID       the project (mailroom project list shows the ids)
  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --json             print the answer as JSON`;
const FORM_HELP = `  --name TEXT              the project's name for the form
  --topic KEY              the topic a signup subscribes to (pending first when it has double opt-in)
  --group REF              the audience group a signup joins
  --origins LIST           origins a browser may post from, comma-separated (https://www.example.com)
  --consent-text TEXT      the wording shown next to the form (a new one is the next version)
  --sender ADDRESS         the confirmation message's sender
  --confirm-template REF   the confirmation message's template (default: the built-in one)`;

/** `mailroom forms`: the project's signup forms. */
export const formListCommand: Command = {
  name: 'forms',
  summary: "List the project's signup forms (POST /subscribe/REF from a website)",
  help: `Usage: mailroom forms --project ID [--database URL|FILE] [--json]

Options:
${COMMON_HELP}`,
  flags: FLAGS,
  positionals: { min: 0, max: 0, names: '' },
  run: async (args, io) => printForms(args, io, await withAdmin(args, io, (admin) => admin.forms.list())),
};

/** `mailroom form create --name TEXT --topic KEY --consent-text TEXT --sender ADDRESS`. */
export const formCreateCommand: Command = {
  name: 'form create',
  summary: 'Create a signup form: a group and/or a topic, allowed origins, consent text, sender',
  help: `Usage: mailroom form create --project ID --name TEXT [--topic KEY] [--group REF]
                          --consent-text TEXT --sender ADDRESS [--origins LIST]
                          [--confirm-template REF] [--json]

A website's form posts { email } to POST /subscribe/REF (JSON or form-encoded).

Options:
${FORM_HELP}
${COMMON_HELP}`,
  flags: FORM_FLAGS,
  positionals: { min: 0, max: 0, names: '' },
  run: async (args, io) => {
    const patch = patchOf(args);
    const form = await withAdmin(args, io, (admin) =>
      admin.forms.create({
        ...patch,
        name: args.required('name'),
        consentText: args.required('consent-text'),
        sender: args.required('sender'),
      }),
    );
    return printForms(args, io, [form], `Created form ${form.ref}: POST /subscribe/${form.ref}`);
  },
};

/** `mailroom form update REF [--consent-text TEXT ...]`. */
export const formUpdateCommand: Command = {
  name: 'form update',
  summary: "Change a signup form (a new consent text is the form's next version)",
  help: `Usage: mailroom form update --project ID REF [--name TEXT] [--topic KEY] [--group REF]
                          [--origins LIST] [--consent-text TEXT] [--sender ADDRESS]
                          [--confirm-template REF] [--json]

Options:
${FORM_HELP}
${COMMON_HELP}`,
  flags: FORM_FLAGS,
  positionals: { min: 1, max: 1, names: 'the form REF' },
  run: async (args, io) => {
    const ref = args.positionals[0] ?? '';
    const form = await withAdmin(args, io, (admin) => admin.forms.update(ref, patchOf(args)));
    return printForms(args, io, [form], `Updated form ${form.ref} (consent text v${form.consentVersion}).`);
  },
};

/** `mailroom form delete REF`. */
export const formDeleteCommand: Command = {
  name: 'form delete',
  summary: 'Delete a signup form (its signups and the consent history stay)',
  help: `Usage: mailroom form delete --project ID REF [--database URL|FILE]

Options:
${COMMON_HELP}`,
  flags: FLAGS,
  positionals: { min: 1, max: 1, names: 'the form REF' },
  run: async (args, io) => {
    const ref = args.positionals[0] ?? '';
    await withAdmin(args, io, (admin) => admin.forms.remove(ref));
    println(io.stdout, `Deleted form ${ref}.`);
    return EXIT_OK;
  },
};

/** Every form command, in the order `mailroom --help` lists them. */
export const FORM_COMMANDS: readonly Command[] = [
  formListCommand,
  formCreateCommand,
  formUpdateCommand,
  formDeleteCommand,
];

function patchOf(args: ParsedArgs): FormPatch {
  const text = (flag: string) => args.string(flag);
  const origins = text('origins');
  const fields: Array<[keyof FormPatch, string | undefined]> = [
    ['name', text('name')],
    ['topic', text('topic')],
    ['group', text('group')],
    ['consentText', text('consent-text')],
    ['sender', text('sender')],
    ['confirmTemplate', text('confirm-template')],
  ];
  return {
    ...Object.fromEntries(fields.filter(([, v]) => v !== undefined)),
    ...(origins !== undefined
      ? {
          allowedOrigins: origins
            .split(',')
            .map((o) => o.trim())
            .filter((o) => o !== ''),
        }
      : {}),
  };
}

function printForms(args: ParsedArgs, io: CliIo, forms: FormView[], done?: string): number {
  if (args.flag('json')) {
    printJson(io, done ? forms[0] : forms);
    return EXIT_OK;
  }
  if (done) println(io.stdout, done);
  else if (forms.length === 0) println(io.stdout, 'No forms yet: mailroom form create --name TEXT ...');
  for (const f of forms) {
    const target = [f.topic ? `topic ${f.topic}` : '', f.group ? `group ${f.group}` : '']
      .filter(Boolean)
      .join(', ');
    println(io.stdout, `${f.ref}\t${target}\tv${f.consentVersion}\t${f.name}`);
  }
  return EXIT_OK;
}
