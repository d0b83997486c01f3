import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { ProjectBrandPatch } from '@mailroom/core';
import { withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG } from '../flags/args.js';
import { EXIT_OK, UsageError } from '../output/cli-errors.js';
import { println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { Command } from './command.js';

/** Image types a logo file may have, by extension. */
const LOGO_TYPES: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
};

/** `mailroom brand [--color #rrggbb|none] [--logo FILE|none]`: how the preference centre looks. */
export const brandCommand: Command = {
  name: 'brand',
  summary: "Show or set the project's colour and logo on the pages its contacts see",
  help: `Usage: mailroom brand --project ID [--color #RRGGBB|none] [--logo FILE|none] [--json]

Without options, shows the brand. The logo is kept inline (a data URI of at most 64 KiB):
the preference centre loads nothing from another host.

Options:
  --color C          the accent colour, #rrggbb (none: the default)
  --logo FILE        a .png, .jpg, .gif, .webp or .svg file (none: no logo)
  --project ID       the project (mailroom project list shows the ids)
  --database URL     database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --json             print the answer as JSON`,
  flags: {
    ...DATABASE_FLAG,
    ...JSON_FLAG,
    project: { type: 'string' },
    color: { type: 'string' },
    logo: { type: 'string' },
  },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const color = args.string('color');
    const logo = args.string('logo');
    const patch: ProjectBrandPatch = {
      ...(color !== undefined ? { color: color === 'none' ? null : color } : {}),
      ...(logo !== undefined ? { logo: logo === 'none' ? null : logoUri(logo) } : {}),
    };
    const set = color !== undefined || logo !== undefined;
    const brand = await withAdmin(args, io, (admin) =>
      set ? admin.topics.setBrand(patch) : admin.topics.brand(),
    );
    if (args.flag('json')) {
      printJson(io, brand);
      return EXIT_OK;
    }
    if (set) println(io.stdout, 'Brand updated.');
    println(io.stdout, `name\t${brand.name}`);
    println(io.stdout, `color\t${brand.color ?? '(default)'}`);
    println(
      io.stdout,
      `logo\t${brand.logo ? `${brand.logo.slice(0, brand.logo.indexOf(','))} (${brand.logo.length} characters)` : '(none)'}`,
    );
    return EXIT_OK;
  },
};

function logoUri(file: string): string {
  const type = LOGO_TYPES[extname(file).toLowerCase()];
  if (!type) throw new UsageError('brand: --logo takes a .png, .jpg, .gif, .webp or .svg file');
  return `data:${type};base64,${readFileSync(file).toString('base64')}`;
}
