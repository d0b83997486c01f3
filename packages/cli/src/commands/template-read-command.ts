import type { TemplateSample, Variables } from '@mailroom/core';
import { withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG } from '../flags/args.js';
import { PAGE_FLAGS, PAGE_HELP, pageOf, printPage } from '../flags/page-flags.js';
import { EXIT_OK, UsageError } from '../output/cli-errors.js';
import { println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { Command } from './command.js';

/** `mailroom template list`: the project's templates by ref (never their sources). */
export const templateListCommand: Command = {
  name: 'template list',
  summary: "List a project's templates (ref, format, version, default subject)",
  help: `Usage: mailroom template list --project ID [--limit N] [--after CURSOR] [--database URL|FILE] [--json]

Lists the templates by ref: format, current version, default subject.

Options:
${PAGE_HELP}
  --json             print { items, next } as JSON (with each source)`,
  flags: { ...DATABASE_FLAG, ...JSON_FLAG, ...PAGE_FLAGS, project: { type: 'string' } },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const page = await withAdmin(args, io, (admin) => admin.templates.list(pageOf(args)));
    printPage(
      io,
      args,
      page,
      (t) =>
        `${t.ref}  ${t.format}  version ${t.version}  updated ${t.updatedAt.toISOString()}${t.subject ? `  ${t.subject}` : ''}`,
    );
    return EXIT_OK;
  },
};

/** `mailroom template preview REF [--variables JSON] [--to ADDRESS] [--to-name NAME]`. */
export const templatePreviewCommand: Command = {
  name: 'template preview',
  summary: 'Render a stored template for sample variables: subject, text and HTML',
  help: `Usage: mailroom template preview --project ID REF [--variables JSON] [--to ADDRESS] [--to-name NAME]
                                [--database URL|FILE] [--json]

Renders the template as a recipient would get it (without tracking). Without --to, the
recipient is Ada Lovelace <ada@example.com>.

Options:
  --variables JSON   global variables, a JSON object
  --to ADDRESS       the recipient's address
  --to-name NAME     the recipient's name
  --strict-variables fail, naming it, on a variable the sample lacks (a typo such as
                     {{ recipient.fristName }} renders empty otherwise, as it would in a send
                     unless serve or worker runs with --strict-variables); local database only
  --json             print { subject, html, text } as JSON`,
  flags: {
    ...DATABASE_FLAG,
    ...JSON_FLAG,
    project: { type: 'string' },
    variables: { type: 'string' },
    to: { type: 'string' },
    'to-name': { type: 'string' },
    'strict-variables': { type: 'boolean' },
  },
  positionals: { min: 1, max: 1, names: 'the template REF' },
  async run(args, io) {
    const ref = args.positionals[0] ?? '';
    const sample: TemplateSample = {};
    const variables = args.string('variables');
    if (variables !== undefined) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(variables);
      } catch {
        parsed = undefined;
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new UsageError('--variables must be a JSON object', args.command);
      }
      sample.variables = parsed as Variables;
    }
    const to = args.string('to');
    const toName = args.string('to-name');
    if (to !== undefined || toName !== undefined) {
      sample.recipient = {
        ...(to !== undefined ? { address: to } : {}),
        ...(toName ? { name: toName } : {}),
      };
    }
    const rendered = await withAdmin(args, io, (admin) => admin.templates.preview(ref, sample), [
      'strict-variables',
    ]);
    // The three fields the API answers, in its order, whichever side rendered.
    const { subject, html, text } = rendered;
    if (args.flag('json')) {
      printJson(io, { subject, html, text });
      return EXIT_OK;
    }
    println(io.stdout, `Subject: ${subject}`);
    println(io.stdout);
    println(io.stdout, text);
    if (html !== null) {
      println(io.stdout);
      println(io.stdout, html);
    }
    return EXIT_OK;
  },
};
