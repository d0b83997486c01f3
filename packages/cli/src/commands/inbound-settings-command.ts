import type { ReceivingSettingsInput, ReceivingSettingsView } from '@mailroom/core';
import { withAdmin } from '../admin/admin-target.js';
import { DATABASE_FLAG, JSON_FLAG, type ParsedArgs } from '../flags/args.js';
import { EXIT_OK, UsageError } from '../output/cli-errors.js';
import { println } from '../output/io.js';
import { printJson } from '../output/output.js';
import type { Command } from './command.js';

/** The bounds the engine takes (`receiving.updateSettings`), checked here first for a usage error. */
const RETENTION_DAYS = { min: 1, max: 36_500 };
const MESSAGE_BYTES = { min: 1024, max: 100 * 1024 * 1024 };
/** A domain name, as the engine checks it. */
const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i;

/**
 * `mailroom inbound settings`: shows a project's receiving settings, or changes the ones given
 * (`PATCH /inbound/settings`: the others are kept).
 */
export const inboundSettingsCommand: Command = {
  name: 'inbound settings',
  summary: "Show or change a project's receiving settings: retention, size cap, reply addresses",
  help: `Usage: mailroom inbound settings --project ID [--retention-days N|default]
                                [--max-message-bytes N|default] [--reply-domain DOMAIN|off]
                                [--database URL|FILE] [--json]

Without a change, shows the settings; with one or more, changes those and keeps the others.
"default" puts a setting back to the engine's (receiving.retentionDays, maxMessageBytes).

Options:
  --retention-days N        days received mail (raw bytes and attachments) is kept, 1 to 36500;
                            it applies to mail received from now on
  --max-message-bytes N     largest message the project's routes take (552 past it), 1024 to
                            104857600; a suffix KiB or MiB multiplies (25MiB)
  --reply-domain DOMAIN     send every message with Reply-To: reply+<delivery id>@DOMAIN, so that
                            a reply is linked to its delivery without headers; the project needs
                            a route taking reply+* at DOMAIN (mailroom route add DOMAIN 'reply+*').
                            off: no reply addresses
  --project ID              the project (mailroom project list shows the ids)
  --database URL            database (default: MAILROOM_DATABASE_URL, else ./mailroom.db)
  --json                    print the answer as JSON`,
  flags: {
    ...DATABASE_FLAG,
    ...JSON_FLAG,
    project: { type: 'string' },
    'retention-days': { type: 'string' },
    'max-message-bytes': { type: 'string' },
    'reply-domain': { type: 'string' },
  },
  positionals: { min: 0, max: 0, names: '' },
  async run(args, io) {
    const patch = patchOf(args);
    const settings = await withAdmin(args, io, (admin) =>
      Object.keys(patch).length === 0 ? admin.receiving.getSettings() : admin.receiving.updateSettings(patch),
    );
    if (args.flag('json')) {
      printJson(io, settings);
      return EXIT_OK;
    }
    for (const line of settingsLines(settings)) println(io.stdout, line);
    return EXIT_OK;
  },
};

/** The change the flags ask for; empty when none is given. */
function patchOf(args: ParsedArgs): ReceivingSettingsInput {
  const patch: ReceivingSettingsInput = {};
  const retention = args.string('retention-days');
  if (retention !== undefined) {
    patch.retention_days = isDefault(retention)
      ? null
      : bounded(retention, '--retention-days', RETENTION_DAYS, 'days', args.command);
  }
  const bytes = args.string('max-message-bytes');
  if (bytes !== undefined) {
    patch.max_message_bytes = isDefault(bytes) ? null : byteCount(bytes, args.command);
  }
  const domain = args.string('reply-domain');
  if (domain !== undefined) {
    const trimmed = domain.trim();
    if (trimmed === '') throw new UsageError('--reply-domain needs a domain, or off', args.command);
    if (!/^(off|none)$/i.test(trimmed) && !DOMAIN.test(trimmed)) {
      throw new UsageError(
        `--reply-domain must be a domain name (in.example.com), or off; got '${domain}'`,
        args.command,
      );
    }
    patch.reply_domain = /^(off|none)$/i.test(trimmed) ? null : trimmed;
  }
  return patch;
}

function isDefault(value: string): boolean {
  return value.trim().toLowerCase() === 'default';
}

function bounded(
  value: string,
  flag: string,
  bounds: { min: number; max: number },
  unit: string,
  command: string,
): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < bounds.min || n > bounds.max) {
    throw new UsageError(
      `${flag} must be a whole number of ${unit} from ${bounds.min} to ${bounds.max}, or default; got '${value}'`,
      command,
    );
  }
  return n;
}

/** `26214400`, `25MiB`, `512KiB` (also `25M`, `512K`: binary units, as the engine's 25 MiB default). */
function byteCount(value: string, command: string): number {
  const found = /^(\d+)\s*(k|kib|m|mib)?$/i.exec(value.trim());
  const unit = found?.[2]?.toLowerCase().startsWith('m') ? 1024 * 1024 : found?.[2] ? 1024 : 1;
  const n = found ? Number(found[1]) * unit : Number.NaN;
  return bounded(
    Number.isSafeInteger(n) ? String(n) : value,
    '--max-message-bytes',
    MESSAGE_BYTES,
    'bytes',
    command,
  );
}

function settingsLines(s: ReceivingSettingsView): string[] {
  const retention =
    s.retention_days === null
      ? `${s.defaults.retention_days === null ? 'kept' : `${s.defaults.retention_days} days`} (the default)`
      : `${s.retention_days} days`;
  const bytes =
    s.max_message_bytes === null
      ? `${s.defaults.max_message_bytes} bytes (the default)`
      : `${s.max_message_bytes} bytes`;
  return [
    `Retention:         ${retention}`,
    `Max message size:  ${bytes}`,
    `Reply addresses:   ${s.reply_domain === null ? 'off' : `reply+<delivery id>@${s.reply_domain}`}`,
    `Updated:           ${s.updated_at ?? 'never (every setting is the default)'}`,
  ];
}
