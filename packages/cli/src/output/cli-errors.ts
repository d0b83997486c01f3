import { isMailroomError, MailroomError } from '@mailroom/core';

/** Exit code of a command that did what it was asked. */
export const EXIT_OK = 0;
/** Exit code of a runtime failure: unreachable database or SMTP server, a refused admin operation. */
export const EXIT_FAILURE = 1;
/** Exit code of a usage error: unknown command or flag, missing or malformed argument. */
export const EXIT_USAGE = 2;

/**
 * A command line the CLI cannot run as written. A `MailroomError` like every other failure; its class
 * is what maps it to exit code 2.
 */
export class UsageError extends MailroomError {
  /** The command whose `--help` the message points at (`project create`), if any. */
  readonly helpFor: string | undefined;

  constructor(message: string, helpFor?: string) {
    super('VALIDATION_FAILED', message);
    this.helpFor = helpFor;
  }
}

/** Exit code for a failure. */
export function exitCodeOf(error: unknown): number {
  return error instanceof UsageError ? EXIT_USAGE : EXIT_FAILURE;
}

/**
 * Codes whose message is written for the reader and says it all: their cause (a database's "UNIQUE
 * constraint failed: ..." under a CONFLICT, mjml's own message under a TEMPLATE_INVALID) would only repeat
 * it or add internals.
 */
const COMPLETE_CODES: ReadonlySet<string> = new Set(['CONFLICT', 'NOT_FOUND', 'TEMPLATE_INVALID']);

/**
 * The failure as one line for stderr. Causes are appended (a store error's driver message is what names
 * the real problem: `ECONNREFUSED 127.0.0.1:5432`), except under a code whose message says it all
 * (`COMPLETE_CODES`); line breaks are folded so that scripts can `head -1`.
 */
export function describeFailure(error: unknown): string {
  if (error instanceof UsageError) {
    const help = error.helpFor ? `mailroom ${error.helpFor} --help` : 'mailroom --help';
    return oneLine(`${error.message} (see ${help})`);
  }
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 4; depth++) {
    const text = messageOf(current);
    if (text && !parts.some((p) => p.includes(text))) parts.push(text);
    if (isMailroomError(current) && COMPLETE_CODES.has(current.code)) break;
    current = current instanceof Error ? current.cause : undefined;
  }
  return oneLine(parts.join(': ') || 'unknown failure');
}

/** A stable machine-readable code for `--json` error output. */
export function codeOf(error: unknown): string {
  if (error instanceof UsageError) return 'USAGE';
  return isMailroomError(error) ? error.code : 'INTERNAL';
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0 && !error.message) {
    // Node reports a refused dual-stack connect as an AggregateError with an empty message.
    return error.errors.map(messageOf).join(', ');
  }
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    if (error.message) return error.message;
    return typeof code === 'string' ? code : error.name;
  }
  return String(error);
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}
