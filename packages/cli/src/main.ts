import { readFileSync } from 'node:fs';
import { REMOTE_HELP } from './admin/admin-target.js';
import type { Command } from './commands/command.js';
import { findCommand, subcommandsOf, topLevelHelp } from './commands/commands.js';
import { parseCommandArgs, takeGlobalOptions } from './flags/args.js';
import { codeOf, describeFailure, EXIT_OK, EXIT_USAGE, exitCodeOf, UsageError } from './output/cli-errors.js';
import { type CliIo, onSignals, println, processIo } from './output/io.js';

/**
 * Runs the `mailroom` command line and resolves to its exit code: 0 done, 1 runtime failure (database or
 * SMTP server unreachable, a refused operation), 2 usage error. Never rejects, and never exits the
 * process but for a second SIGTERM/SIGINT during a stuck shutdown (default `io` only). `serve` and
 * `worker` resolve only after a graceful shutdown (see {@link CliIo.onShutdown}).
 *
 * @example
 * process.exitCode = await main(['project', 'create', 'Acme', '--json']);
 */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const cli: CliIo = { ...io, onShutdown: io.onShutdown ?? onSignals };
  const json = argv.includes('--json');
  try {
    return await dispatch(argv, cli);
  } catch (error) {
    if (json)
      println(
        cli.stderr,
        JSON.stringify({ error: { code: codeOf(error), message: describeFailure(error) } }),
      );
    else println(cli.stderr, `mailroom: ${describeFailure(error)}`);
    return exitCodeOf(error);
  }
}

async function dispatch(line: readonly string[], io: CliIo): Promise<number> {
  const { globals, rest: argv } = takeGlobalOptions(line);
  const [first, ...others] = argv;
  if (first === undefined) {
    println(io.stderr, topLevelHelp());
    return EXIT_USAGE;
  }
  if (first === '--help' || first === '-h') return help(io, []);
  if (first === 'help') return help(io, others);
  if (first === '--version' || first === '-v') {
    println(io.stdout, version());
    return EXIT_OK;
  }
  const found = findCommand(argv);
  if (!found) throw unknownCommand(argv);
  const { command, rest } = found;
  if (command.localOnly && (globals.url !== undefined || globals.key !== undefined)) {
    throw new UsageError(
      `mailroom ${command.name} ${command.localOnly}: it does not take --url`,
      command.name,
    );
  }
  const args = parseCommandArgs(command.name, rest, command.flags, command.positionals, globals);
  if (args.help) {
    println(io.stdout, helpOf(command));
    return EXIT_OK;
  }
  return command.run(args, io);
}

function help(io: CliIo, words: readonly string[]): number {
  if (words.length === 0) {
    println(io.stdout, topLevelHelp());
    return EXIT_OK;
  }
  const found = findCommand(words);
  if (!found) throw unknownCommand(words);
  println(io.stdout, helpOf(found.command));
  return EXIT_OK;
}

/** A command's help; an admin command's says how to run it remotely. */
function helpOf(command: Command): string {
  return command.localOnly ? command.help : `${command.help}\n\n${REMOTE_HELP}`;
}

function unknownCommand(argv: readonly string[]): UsageError {
  const [first = '', second] = argv;
  const subcommands = subcommandsOf(first);
  if (subcommands.length === 0) return new UsageError(`unknown command '${first}'`);
  const choices = subcommands.map((s) => `${first} ${s}`).join(', ');
  if (second === undefined || second.startsWith('-'))
    return new UsageError(`'${first}' needs a subcommand: ${choices}`);
  return new UsageError(`unknown command '${first} ${second}' (try ${choices})`);
}

/** The version of this package, read from its package.json next to `src/` and `dist/` alike. */
function version(): string {
  const pkg: unknown = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const v = typeof pkg === 'object' && pkg !== null ? (pkg as { version?: unknown }).version : undefined;
  return typeof v === 'string' ? v : 'unknown';
}
