import type { FlagSpec, ParsedArgs } from '../flags/args.js';
import type { CliIo } from '../output/io.js';

/** One command of the CLI (`serve`, `project create`, ...): its flags, its help and what it does. */
export interface Command {
  /** The command words, for example `project create`. */
  readonly name: string;
  /** One line for the command list of `mailroom --help`. */
  readonly summary: string;
  /** The full text of `mailroom <name> --help`. */
  readonly help: string;
  /** Flags besides `--help`, which every command takes. */
  readonly flags: FlagSpec;
  /** How many positional arguments it takes, and their names for a "missing ..." error. */
  readonly positionals: { min: number; max: number; names: string };
  /**
   * Set on the commands that run only on the database's machine (`serve`, `worker`, ...): why. They
   * refuse the global `--url` with it; every other command is an admin command that runs remotely too.
   */
  readonly localOnly?: string;
  /** Runs the command; resolves to the exit code. Failures are thrown and reported by `main`. */
  run(args: ParsedArgs, io: CliIo): Promise<number>;
}
