import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import type { TemplateFormat } from '@mailroom/core';
import { assertLiquidSyntax, MailroomError } from '@mailroom/core';
import { withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG } from '../flags/args.js';
import { EXIT_OK, UsageError } from '../output/cli-errors.js';
import { println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { Command } from './command.js';

/** Template formats by file extension. */
const FORMATS: Readonly<Record<string, TemplateFormat>> = {
  '.mjml': 'mjml',
  '.html': 'html',
  '.htm': 'html',
  '.txt': 'text',
  '.text': 'text',
};

/** `mailroom template add --project ID --ref REF --file PATH [--subject S]`: a template or a new version. */
export const templateAddCommand: Command = {
  name: 'template add',
  summary: 'Add a template from a .mjml, .html or .txt file (or a new version of it)',
  help: `Usage: mailroom template add --project ID --ref REF --file PATH [--subject S] [--database URL|FILE] [--json]

Stores the file as the project's template REF; if REF exists, as its next version.
The format comes from the extension: .mjml (compiled now), .html or .txt. Liquid
placeholders such as {{ recipient.firstName }} are rendered per recipient.

Options:
  --project ID       the project (mailroom project list shows the ids)
  --ref REF          the template's reference, used by requests as template.ref
  --file PATH        the template source (.mjml, .html, .htm, .txt)
  --subject S        default subject when a request gives none
  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --json             print {"ref", "format", "subject", "version", ...} as JSON`,
  flags: {
    ...DATABASE_FLAG,
    ...JSON_FLAG,
    project: { type: 'string' },
    ref: { type: 'string' },
    file: { type: 'string' },
    subject: { type: 'string' },
  },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const ref = args.required('ref');
    const given = args.required('file');
    const file = resolve(io.cwd, given);
    const subject = args.string('subject');
    // Errors name the flag and the file as the user wrote them.
    if (subject !== undefined) assertLiquidSyntax(subject, '--subject');
    const format = FORMATS[extname(file).toLowerCase()];
    if (!format) {
      throw new UsageError(`cannot tell the format of ${file}: use a .mjml, .html or .txt file`, this.name);
    }
    const source = await readFile(file, 'utf8').catch((error: unknown) => {
      throw new MailroomError('VALIDATION_FAILED', `cannot read ${file}`, { cause: error });
    });
    const template = await withAdmin(args, io, (admin) =>
      admin.storeTemplate({
        ref,
        format,
        source,
        sourceName: given,
        ...(subject === undefined ? {} : { subject }),
      }),
    );
    if (args.flag('json')) {
      const { source: _source, ...summary } = template;
      printJson(io, summary);
      return EXIT_OK;
    }
    println(io.stdout, `Stored template ${template.ref} version ${template.version} (${template.format}).`);
    return EXIT_OK;
  },
};
