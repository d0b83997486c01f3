import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from '../output/cli-errors.js';

/** The flags of a command, in `node:util` `parseArgs` form. */
export type FlagSpec = NonNullable<ParseArgsConfig['options']>;

/**
 * The options given before the command words (`mailroom --url URL --key KEY webhook list`): they say
 * where the command runs, not what it does, so no command's own flag (`webhook add --url`) can clash.
 */
export interface GlobalOptions {
  /** Where a server's HTTP API is mounted: the admin commands run through it. */
  url?: string;
  /** A project key for that API. */
  key?: string;
}

/** A parsed command line, with typed readers that turn bad values into usage errors. */
export interface ParsedArgs {
  /** The command the line was parsed for (`project create`), for error messages. */
  readonly command: string;
  /** The options given before the command words. */
  readonly globals: GlobalOptions;
  /** Positional arguments, after the command words. */
  readonly positionals: readonly string[];
  /** Whether `--help` (or `-h`) was given. */
  readonly help: boolean;
  /** A string flag, or `undefined` when absent. */
  string(name: string): string | undefined;
  /** Every value of a repeatable string flag (`multiple: true`), in order; empty when absent. */
  list(name: string): string[];
  /** A string flag that must be present. */
  required(name: string): string;
  /** A boolean flag. */
  flag(name: string): boolean;
  /** An integer flag within bounds, or `undefined` when absent. */
  int(name: string, bounds: { min: number; max: number }): number | undefined;
}

/** The `--database` flag every command that opens the store takes. */
export const DATABASE_FLAG: FlagSpec = { database: { type: 'string' } };
/** The `--json` flag of the admin commands. */
export const JSON_FLAG: FlagSpec = { json: { type: 'boolean' } };

/**
 * Parses a command's arguments strictly: an unknown flag, a missing flag value or too many positionals is
 * a {@link UsageError} (exit code 2) with a one-line message.
 */
export function parseCommandArgs(
  command: string,
  argv: readonly string[],
  flags: FlagSpec,
  positionals: { min: number; max: number; names: string },
  globals: GlobalOptions = {},
): ParsedArgs {
  let parsed: {
    values: Record<string, string | string[] | boolean | undefined>;
    positionals: string[];
    tokens: Array<{ kind: string; name?: string; value?: string }>;
  };
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { ...flags, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: true,
      tokens: true,
    }) as typeof parsed;
  } catch (error) {
    throw new UsageError(parseErrorMessage(error), command);
  }
  refuseRepeated(parsed.tokens, flags, command);
  const { values } = parsed;
  const help = values.help === true;
  if (!help) {
    const count = parsed.positionals.length;
    if (count < positionals.min) throw new UsageError(`missing ${positionals.names}`, command);
    if (count > positionals.max) {
      throw new UsageError(`unexpected argument '${parsed.positionals[positionals.max]}'`, command);
    }
  }

  const string = (name: string): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  return {
    command,
    globals,
    positionals: parsed.positionals,
    help,
    string,
    list(name) {
      const value = values[name];
      return Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
    },
    required(name) {
      const value = string(name);
      if (value === undefined || value.trim() === '') throw new UsageError(`missing --${name}`, command);
      return value;
    },
    flag: (name) => values[name] === true,
    int(name, bounds) {
      const value = string(name);
      return value === undefined ? undefined : parseBoundedInt(value, `--${name}`, bounds, command);
    },
  };
}

/**
 * A flag that takes one value, given twice (`--scope sending --scope read`): `parseArgs` would keep the
 * last one silently, so the command would do something else than the line says. Refused, naming both.
 */
function refuseRepeated(
  tokens: ReadonlyArray<{ kind: string; name?: string; value?: string }>,
  flags: FlagSpec,
  command: string,
): void {
  const seen = new Map<string, string | undefined>();
  for (const token of tokens) {
    if (token.kind !== 'option' || token.name === undefined) continue;
    const spec = flags[token.name];
    if (!spec || spec.multiple) continue;
    if (seen.has(token.name)) {
      const values =
        spec.type === 'string' ? ` ('${seen.get(token.name)}', then '${token.value ?? ''}')` : '';
      throw new UsageError(`--${token.name} is given more than once${values}: give it once`, command);
    }
    seen.set(token.name, token.value);
  }
}

/** The names of the {@link GlobalOptions}, as flags. */
const GLOBAL_FLAGS = { '--url': 'url', '--key': 'key' } as const;

/**
 * Takes the global options off the front of `argv` (`--url URL`, `--key=KEY`, in any order): they and
 * the rest of the line, from the first command word on.
 */
export function takeGlobalOptions(argv: readonly string[]): { globals: GlobalOptions; rest: string[] } {
  const globals: GlobalOptions = {};
  let i = 0;
  for (; i < argv.length; i++) {
    const word = argv[i] as string;
    const [flag, inline] = word.includes('=')
      ? [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]
      : [word, undefined];
    const name = GLOBAL_FLAGS[flag as keyof typeof GLOBAL_FLAGS];
    if (name === undefined) break;
    const value = inline ?? argv[i + 1];
    if (value === undefined || (inline === undefined && value.startsWith('-')) || value.trim() === '') {
      throw new UsageError(`option '${flag}' needs a value`);
    }
    globals[name] = value;
    if (inline === undefined) i++;
  }
  return { globals, rest: argv.slice(i) };
}

/** An integer from a flag or an environment variable, within bounds; a usage error otherwise. */
export function parseBoundedInt(
  value: string,
  label: string,
  bounds: { min: number; max: number },
  command?: string,
): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < bounds.min || n > bounds.max) {
    throw new UsageError(
      `${label} must be an integer from ${bounds.min} to ${bounds.max}, got '${value}'`,
      command,
    );
  }
  return n;
}

/** `parseArgs` messages run to three sentences of advice; the first one says what is wrong. */
function parseErrorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  // A flag followed by another flag or by nothing: parseArgs calls it "ambiguous" or "argument missing".
  const valueless = /^Option '(--[\w-]+)(?: <value>)?' argument (?:is ambiguous|missing)/.exec(text);
  if (valueless) return `option '${valueless[1]}' needs a value`;
  const first = text.split(/\.\s/, 1)[0] ?? text;
  return first.replace(/\.$/, '').replace(/^./, (c) => c.toLowerCase());
}
