import { UsageError } from './cli-errors.js';

const LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;

/** A log level of {@link cliLogger} (`silent` logs nothing). */
export type LogLevel = (typeof LEVELS)[number];

/**
 * The log level from `--log-level`, else `MAILROOM_LOG_LEVEL`, else `info`. Apart from `cliLogger`, so
 * that reading the flag does not load pino: the commands load the logger only when they make one.
 */
export function logLevelOf(flag: string | undefined, env: string | undefined, command: string): LogLevel {
  const given = (flag ?? env ?? '').trim().toLowerCase();
  if (given === '') return 'info';
  if (!(LEVELS as readonly string[]).includes(given)) {
    throw new UsageError(`--log-level must be one of ${LEVELS.join(', ')}, got '${flag ?? env}'`, command);
  }
  return given as LogLevel;
}
