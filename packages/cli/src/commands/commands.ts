import { audienceCreateCommand } from './audience-command.js';
import {
  audienceImportCommand,
  audienceImportStatusCommand,
  audienceListCommand,
  audienceProfilesCommand,
} from './audience-read-command.js';
import { AUTOMATION_COMMANDS } from './automation-command.js';
import { brandCommand } from './brand-command.js';
import { broadcastStatusCommand } from './broadcast-command.js';
import type { Command } from './command.js';
import {
  domainAddCommand,
  domainCheckCommand,
  domainListCommand,
  domainRotateCommand,
  domainVerifyCommand,
} from './domain-command.js';
import { FORM_COMMANDS } from './form-command.js';
import { inboundCommand } from './inbound-command.js';
import { keyCreateCommand, keyListCommand, keyRevokeCommand, keyRotateCommand } from './key-command.js';
import { broadcastListCommand, messageStatusCommand } from './message-command.js';
import { PAUSE_COMMANDS } from './pause-command.js';
import { projectCreateCommand, projectListCommand } from './project-command.js';
import { RECEIVING_COMMANDS } from './receiving-command.js';
import { senderAddCommand, senderListCommand, senderRemoveCommand } from './sender-command.js';
import { serveCommand } from './serve-command.js';
import {
  suppressionAddCommand,
  suppressionLiftCommand,
  suppressionListCommand,
} from './suppression-command.js';
import { templateAddCommand } from './template-command.js';
import { templateListCommand, templatePreviewCommand } from './template-read-command.js';
import { TOPIC_COMMANDS } from './topic-command.js';
import {
  webhookAddCommand,
  webhookDisableCommand,
  webhookEnableCommand,
  webhookListCommand,
  webhookRemoveCommand,
} from './webhook-command.js';
import { workerCommand } from './worker-command.js';

/** Every command, in the order `mailroom --help` lists them. */
export const COMMANDS: readonly Command[] = [
  serveCommand,
  workerCommand,
  inboundCommand,
  projectCreateCommand,
  projectListCommand,
  keyCreateCommand,
  keyListCommand,
  keyRevokeCommand,
  keyRotateCommand,
  senderAddCommand,
  senderListCommand,
  senderRemoveCommand,
  domainAddCommand,
  domainListCommand,
  domainVerifyCommand,
  domainRotateCommand,
  domainCheckCommand,
  templateAddCommand,
  templateListCommand,
  templatePreviewCommand,
  audienceCreateCommand,
  audienceListCommand,
  audienceProfilesCommand,
  audienceImportCommand,
  audienceImportStatusCommand,
  broadcastStatusCommand,
  broadcastListCommand,
  messageStatusCommand,
  suppressionListCommand,
  suppressionAddCommand,
  suppressionLiftCommand,
  ...PAUSE_COMMANDS,
  ...TOPIC_COMMANDS,
  ...FORM_COMMANDS,
  brandCommand,
  ...AUTOMATION_COMMANDS,
  webhookAddCommand,
  webhookListCommand,
  webhookRemoveCommand,
  webhookEnableCommand,
  webhookDisableCommand,
  ...RECEIVING_COMMANDS,
];

/** The command named by the first words of `argv`, with the arguments after them. */
export function findCommand(argv: readonly string[]): { command: Command; rest: string[] } | undefined {
  let found: { command: Command; rest: string[] } | undefined;
  let longest = 0;
  for (const command of COMMANDS) {
    const words = command.name.split(' ');
    // The longest name wins: `inbound list` is not the listener `inbound` with an argument.
    if (words.length > longest && words.every((word, i) => argv[i] === word)) {
      found = { command, rest: argv.slice(words.length) };
      longest = words.length;
    }
  }
  return found;
}

/** The subcommands of a group word (`project` → `create`, `list`), empty when it is no group. */
export function subcommandsOf(group: string): string[] {
  return COMMANDS.filter((c) => c.name.startsWith(`${group} `)).map((c) => c.name.slice(group.length + 1));
}

/** The text of `mailroom --help`. */
export function topLevelHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width + 2)}${c.summary}`);
  return `Usage: mailroom <command> [options]

Mailroom, the embeddable email-sending engine, as a standalone server and admin tool.

Commands:
${lines.join('\n')}

Run mailroom <command> --help for a command's options. Admin commands take --database
and --json. Environment: MAILROOM_DATABASE_URL, MAILROOM_SMTP_URL, PORT (flags win).
Remotely: mailroom --url URL --key KEY <command> (or MAILROOM_URL, MAILROOM_KEY) runs an
admin command through the HTTP API of a mailroom serve, for the project of KEY.
Exit codes: 0 ok, 1 runtime failure, 2 usage error.`;
}
