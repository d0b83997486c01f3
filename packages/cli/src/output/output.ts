import { type CliIo, println } from './io.js';

/** Prints a value as one line of JSON (the `--json` output of the admin commands). */
export function printJson(io: CliIo, value: unknown): void {
  println(io.stdout, JSON.stringify(value));
}

/** Prints `label: value` lines with the labels aligned. */
export function printFields(io: CliIo, fields: ReadonlyArray<readonly [string, string]>): void {
  const width = Math.max(...fields.map(([label]) => label.length));
  for (const [label, value] of fields) println(io.stdout, `${`${label}:`.padEnd(width + 2)}${value}`);
}
